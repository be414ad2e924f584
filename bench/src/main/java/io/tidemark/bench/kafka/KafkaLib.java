package io.tidemark.bench.kafka;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the Kafka server's jars are, and which Kafka they are: the jars module {@code kafka-peer} collects from
 * Maven Central into {@value #LIB_IN_BUILD}, or a directory the user names. Stateless.
 */
public final class KafkaLib
{
    /** Where the Kafka server's jars are, when the bench is run from a build of this repository. */
    public static final String LIB_IN_BUILD = "kafka-peer/target/lib";
    /** System property naming the directory of the Kafka server's jars. */
    public static final String LIB_PROPERTY = "tidemark.kafka.lib";

    private KafkaLib()
    {
    }

    /**
     * Find the Kafka server's jars: {@code explicit} when given, else the {@value #LIB_PROPERTY} system property,
     * else {@value #LIB_IN_BUILD} beside the bench jar's build ({@code bench/target/../../kafka-peer/target/lib}) or
     * under the working directory.
     *
     * @param explicit a directory the user named, or null.
     * @return the directory.
     * @throws IllegalStateException when none holds the broker's jar, saying how to get it.
     */
    public static Path find(final Path explicit)
    {
        final List<Path> candidates = new ArrayList<>();
        if (null != explicit)
        {
            candidates.add(explicit);
        }
        else
        {
            final String property = System.getProperty(LIB_PROPERTY);
            if (null != property && !property.isBlank())
            {
                candidates.add(Path.of(property));
            }
            for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator))
            {
                // bench/target/tidemark-bench.jar or bench/target/classes: the repository is two levels up
                final Path parent = Path.of(entry).toAbsolutePath().getParent();
                if (null != parent && null != parent.getParent() && null != parent.getParent().getParent())
                {
                    candidates.add(parent.getParent().getParent().resolve(LIB_IN_BUILD));
                }
            }
            candidates.add(Path.of(LIB_IN_BUILD).toAbsolutePath());
        }
        for (final Path candidate : candidates)
        {
            if (holdsKafka(candidate))
            {
                return candidate.toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException("no Kafka server jars found (looked in " + candidates + "): build the " +
            "repository with `mvn -B -DskipTests package` (module kafka-peer collects them into " + LIB_IN_BUILD +
            "), or name the directory with --kafka-lib or -D" + LIB_PROPERTY);
    }

    private static boolean holdsKafka(final Path dir)
    {
        if (!Files.isDirectory(dir))
        {
            return false;
        }
        try (java.util.stream.Stream<Path> files = Files.list(dir))
        {
            return files.anyMatch((f) -> f.getFileName().toString().matches("kafka_2\\.13-.*\\.jar"));
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    /** @return the Kafka version of the jars in {@code lib} (from the broker jar's name), or "unknown". */
    public static String version(final Path lib)
    {
        try (java.util.stream.Stream<Path> files = Files.list(lib))
        {
            return files.map((f) -> f.getFileName().toString()).filter((n) -> n.matches("kafka_2\\.13-.*\\.jar"))
                .map((n) -> n.substring("kafka_2.13-".length(), n.length() - ".jar".length())).findFirst()
                .orElse("unknown");
        }
        catch (final IOException ex)
        {
            return "unknown";
        }
    }
}
