package io.tidemark.docs;

import io.tidemark.client.ConsumerContext;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.remote.ClientConfig;
import io.tidemark.host.HostConfig;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.store.LogContext;
import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;
import io.tidemark.zookeeper.ZooKeeperSettings;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The configuration tables of the docs (each introduced by {@code <!-- config-table: ClassName -->}) list exactly
 * the keys of their class's {@code KEYS}: no key of the code undocumented, no documented key the code does not
 * accept, none twice. Every class of the main sources that declares a {@code KEYS} list must have a table. For a
 * class whose keys are defined with a {@link ConfigDef}, the table is exactly its {@link ConfigDef#markdownTable()}:
 * key, default and meaning come from the definitions, so that the docs say what the code does.
 */
class ConfigurationTablesTest
{
    /** The classes whose keys are documented, by simple name. A new configuration class must be added here. */
    private static final Map<String, Set<String>> KEYS_BY_CLASS = Map.of(
        "LogContext", LogContext.KEYS,
        "ReplicationContext", ReplicationContext.KEYS,
        "ProducerContext", ProducerContext.KEYS,
        "ConsumerContext", ConsumerContext.KEYS,
        "HostConfig", HostConfig.KEYS,
        "ClientConfig", ClientConfig.KEYS,
        "ZooKeeperSettings", ZooKeeperSettings.KEYS,
        "KafkaContext", io.tidemark.kafka.KafkaContext.KEYS);

    /** The classes whose keys are defined with a {@link ConfigDef}: their tables are generated from it. */
    private static final Map<String, ConfigDef<?>> DEFINITIONS = Map.of(
        "LogContext", LogContext.CONFIG,
        "ReplicationContext", ReplicationContext.CONFIG,
        "ZooKeeperSettings", ZooKeeperSettings.CONFIG,
        "KafkaContext", io.tidemark.kafka.KafkaContext.CONFIG,
        "HostConfig", HostConfig.CONFIG,
        "ClientConfig", ClientConfig.CONFIG,
        "ProducerContext", ProducerContext.CONFIG,
        "ConsumerContext", ConsumerContext.CONFIG);

    private static final Pattern FIRST_CELL_KEY = Pattern.compile("^\\|\\s*`([^`]+)`\\s*\\|");
    private static final Pattern KEYS_DECLARATION = Pattern.compile("public static final Set<String> KEYS\\b");

    @Test
    void everyTableListsExactlyItsClassKeys()
    {
        final Map<String, List<String>> documented = new TreeMap<>();
        final List<String> problems = new ArrayList<>();
        for (final MarkdownFile page : Repository.pages())
        {
            for (final MarkdownFile.MarkedBlock block : page.markedBlocks())
            {
                if (!block.kind().equals("config-table"))
                {
                    continue;
                }
                final String where = Repository.name(page.path()) + ":" + block.line();
                if (!KEYS_BY_CLASS.containsKey(block.value()))
                {
                    problems.add(where + ": no configuration class " + block.value() + " (known: " +
                        new TreeSet<>(KEYS_BY_CLASS.keySet()) + ")");
                    continue;
                }
                if (block.lines().size() < 3 || !block.lines().get(0).replace(" ", "").startsWith("|Key|"))
                {
                    problems.add(where + ": the marker is not followed by a table whose first column is Key");
                    continue;
                }
                final List<String> keys = documented.computeIfAbsent(block.value(), (k) -> new ArrayList<>());
                for (final String row : block.lines().subList(2, block.lines().size()))
                {
                    final Matcher key = FIRST_CELL_KEY.matcher(row);
                    if (key.find())
                    {
                        keys.add(key.group(1));
                    }
                    else
                    {
                        problems.add(where + ": a row without a `key` in its first cell: " + row);
                    }
                }
            }
        }
        for (final Map.Entry<String, Set<String>> entry : new TreeMap<>(KEYS_BY_CLASS).entrySet())
        {
            final String name = entry.getKey();
            final List<String> keys = documented.get(name);
            if (null == keys)
            {
                problems.add(name + ": no table in the docs (add one after <!-- config-table: " + name + " -->)");
                continue;
            }
            final Set<String> undocumented = new TreeSet<>(entry.getValue());
            keys.forEach(undocumented::remove);
            final Set<String> unknown = new TreeSet<>(keys);
            unknown.removeAll(entry.getValue());
            final Set<String> twice = new TreeSet<>();
            final Set<String> once = new TreeSet<>();
            keys.stream().filter((k) -> !once.add(k)).forEach(twice::add);
            if (!undocumented.isEmpty())
            {
                problems.add(name + ": keys of " + name + ".KEYS missing from its table: " + undocumented);
            }
            if (!unknown.isEmpty())
            {
                problems.add(name + ": keys in its table that " + name + ".KEYS does not have: " + unknown);
            }
            if (!twice.isEmpty())
            {
                problems.add(name + ": keys documented twice: " + twice);
            }
        }
        assertEquals(List.of(), problems, "configuration tables against the code");
    }

    @Test
    void definedTablesAreTheirDefinitions()
    {
        final List<String> problems = new ArrayList<>();
        final Set<String> seen = new TreeSet<>();
        for (final MarkdownFile page : Repository.pages())
        {
            for (final MarkdownFile.MarkedBlock block : page.markedBlocks())
            {
                final ConfigDef<?> definition = DEFINITIONS.get(block.value());
                if (!block.kind().equals("config-table") || null == definition)
                {
                    continue;
                }
                seen.add(block.value());
                final List<String> expected = definition.markdownTable();
                final List<String> actual = block.lines().stream().filter((l) -> l.startsWith("|")).toList();
                if (!expected.equals(actual))
                {
                    problems.add(Repository.name(page.path()) + ":" + block.line() + ": the table of " +
                        block.value() + " is not its definition (" + block.value() + ".CONFIG); it should read:\n" +
                        String.join("\n", expected));
                }
            }
        }
        assertEquals(new TreeSet<>(DEFINITIONS.keySet()), seen, "classes with a ConfigDef and a table");
        assertEquals(List.of(), problems, "configuration tables against their definitions");
    }

    @Test
    void documentedDefaultsStartWithTheDefault()
    {
        final List<String> problems = new ArrayList<>();
        for (final Map.Entry<String, ConfigDef<?>> entry : new TreeMap<>(DEFINITIONS).entrySet())
        {
            for (final ConfigKey<?> key : entry.getValue().keys())
            {
                final Object value = key.defaultValue();
                final String shown = key.defaultText().replace("`", "");
                final boolean named = !shown.isEmpty() && Character.isLetter(shown.charAt(0)) &&
                    !(value instanceof Boolean); // a named default, such as auto or required
                if ((value instanceof Number || value instanceof Boolean) && !named &&
                    !shown.startsWith(String.valueOf(value)))
                {
                    problems.add(entry.getKey() + " " + key.name() + ": default " + value + " documented as " +
                        key.defaultText());
                }
                if (null == key.doc() || key.doc().isBlank())
                {
                    problems.add(entry.getKey() + " " + key.name() + ": no documentation");
                }
            }
        }
        assertEquals(List.of(), problems, "documented defaults");
    }

    @Test
    void everyConfigurationClassOfTheCodeIsChecked() throws IOException
    {
        final Set<String> declaring = new TreeSet<>();
        final Path root = Repository.root();
        for (final Path source : Repository.javaSources("main"))
        {
            if (KEYS_DECLARATION.matcher(Files.readString(root.resolve(source), StandardCharsets.UTF_8)).find())
            {
                final String file = source.getFileName().toString();
                declaring.add(file.substring(0, file.length() - ".java".length()));
            }
        }
        assertTrue(declaring.size() >= KEYS_BY_CLASS.size(), "found only " + declaring);
        if (!declaring.equals(new TreeSet<>(KEYS_BY_CLASS.keySet())))
        {
            fail("classes declaring KEYS " + declaring + " and classes whose tables are checked " +
                new TreeSet<>(KEYS_BY_CLASS.keySet()) + " differ: add the new class to KEYS_BY_CLASS and a table to " +
                "docs/configuration.md");
        }
    }
}
