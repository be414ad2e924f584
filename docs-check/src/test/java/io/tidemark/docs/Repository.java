package io.tidemark.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Where the checked files are: the repository root (found upwards from the working directory) and its pages. */
final class Repository
{
    private Repository()
    {
    }

    /** @return the repository root: the nearest directory upwards holding README.md, docs/ and the parent pom. */
    static Path root()
    {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent())
        {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs")) &&
                Files.isRegularFile(dir.resolve("pom.xml")))
            {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root (README.md, docs/, pom.xml) above " +
            Path.of("").toAbsolutePath());
    }

    /** @return README.md and every docs/*.md, parsed. */
    static List<MarkdownFile> pages()
    {
        final Path root = root();
        final List<MarkdownFile> pages = new ArrayList<>();
        pages.add(MarkdownFile.read(root.resolve("README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs")))
        {
            docs.filter((p) -> p.getFileName().toString().endsWith(".md")).sorted()
                .forEach((p) -> pages.add(MarkdownFile.read(p)));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return pages;
    }

    /** @return every file under {@code <module>/src/<kind>/java} of every module, as paths from the root. */
    static List<Path> javaSources(final String kind)
    {
        final Path root = root();
        final List<Path> sources = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root))
        {
            for (final Path module : modules.filter(Files::isDirectory).sorted().toList())
            {
                final Path dir = module.resolve("src").resolve(kind).resolve("java");
                if (Files.isDirectory(dir))
                {
                    try (Stream<Path> files = Files.walk(dir))
                    {
                        files.filter((p) -> p.toString().endsWith(".java")).sorted()
                            .forEach((p) -> sources.add(root.relativize(p)));
                    }
                }
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return sources;
    }

    /** @return a page's path from the root, with forward slashes, for messages. */
    static String name(final Path path)
    {
        return root().relativize(path).toString().replace('\\', '/');
    }
}
