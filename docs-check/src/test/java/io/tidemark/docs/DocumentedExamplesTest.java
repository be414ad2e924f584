package io.tidemark.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The code examples of the docs cannot drift from the code: a block marked {@code <!-- example: path#name -->} must
 * be, line for line (indentation made relative, trailing spaces ignored), the lines between
 * {@code // EXAMPLE-START name} and {@code // EXAMPLE-END name} of the test source at {@code path}, which its module
 * compiles and runs. Every such region of a test must be shown by some page.
 */
class DocumentedExamplesTest
{
    private static final Pattern START = Pattern.compile("^\\s*// EXAMPLE-START (\\S+)\\s*$");
    private static final Pattern END = Pattern.compile("^\\s*// EXAMPLE-END (\\S+)\\s*$");

    @Test
    void everyExampleBlockIsTheCodeItsTestRuns() throws IOException
    {
        final Map<String, List<String>> regions = testRegions();
        assertFalse(regions.isEmpty(), "no // EXAMPLE-START regions in any test source");
        final Set<String> shown = new HashSet<>();
        final List<String> problems = new ArrayList<>();
        for (final MarkdownFile page : Repository.pages())
        {
            for (final MarkdownFile.MarkedBlock block : page.markedBlocks())
            {
                if (!block.kind().equals("example"))
                {
                    continue;
                }
                final String where = Repository.name(page.path()) + ":" + block.line();
                final List<String> code = regions.get(block.value());
                if (null == code)
                {
                    problems.add(where + ": no region " + block.value() + " (known: " + regions.keySet() + ")");
                    continue;
                }
                shown.add(block.value());
                final String difference = firstDifference(normalize(block.lines()), code);
                if (null != difference)
                {
                    problems.add(where + ": the block differs from " + block.value() + ": " + difference);
                }
            }
        }
        for (final String region : regions.keySet())
        {
            if (!shown.contains(region))
            {
                problems.add(region + ": an example region no page shows (mark a code block <!-- example: " +
                    region + " -->)");
            }
        }
        assertEquals(List.of(), problems, "docs examples against the tests that run them");
    }

    @Test
    void normalizingKeepsRelativeIndentationAndDropsTrailingSpaces()
    {
        assertEquals(List.of("a {", "    b;", "", "}"), normalize(List.of("        a {  ", "            b;", "  ",
            "        }")));
    }

    /** @return every marked region of every test source, keyed {@code path#name}, normalized. */
    private static Map<String, List<String>> testRegions() throws IOException
    {
        final Map<String, List<String>> regions = new TreeMap<>();
        final Path root = Repository.root();
        for (final Path source : Repository.javaSources("test"))
        {
            final List<String> lines = Files.readAllLines(root.resolve(source), StandardCharsets.UTF_8);
            final String file = source.toString().replace('\\', '/');
            for (int i = 0; i < lines.size(); i++)
            {
                final Matcher start = START.matcher(lines.get(i));
                if (!start.matches())
                {
                    continue;
                }
                final String name = start.group(1);
                int end = i + 1;
                while (end < lines.size() && !matchesEnd(lines.get(end), name))
                {
                    end++;
                }
                if (end == lines.size())
                {
                    throw new AssertionError(file + ":" + (i + 1) + ": EXAMPLE-START " + name + " without its END");
                }
                if (null != regions.put(file + "#" + name, normalize(lines.subList(i + 1, end))))
                {
                    throw new AssertionError(file + ": two regions named " + name);
                }
                i = end;
            }
        }
        return regions;
    }

    private static boolean matchesEnd(final String line, final String name)
    {
        final Matcher end = END.matcher(line);
        return end.matches() && end.group(1).equals(name);
    }

    /** Strip trailing spaces and the indentation common to every non-blank line. */
    static List<String> normalize(final List<String> lines)
    {
        int indent = Integer.MAX_VALUE;
        for (final String line : lines)
        {
            if (!line.isBlank())
            {
                indent = Math.min(indent, line.length() - line.stripLeading().length());
            }
        }
        final List<String> normalized = new ArrayList<>();
        for (final String line : lines)
        {
            normalized.add(line.isBlank() ? "" : line.substring(indent).stripTrailing());
        }
        return normalized;
    }

    private static String firstDifference(final List<String> docs, final List<String> code)
    {
        for (int i = 0; i < Math.max(docs.size(), code.size()); i++)
        {
            final String d = i < docs.size() ? docs.get(i) : "<end of block>";
            final String c = i < code.size() ? code.get(i) : "<end of region>";
            if (!d.equals(c))
            {
                return "line " + (i + 1) + " of the block is\n  " + d + "\nbut the test has\n  " + c;
            }
        }
        return null;
    }
}
