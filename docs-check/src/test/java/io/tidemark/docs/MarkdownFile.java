package io.tidemark.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The parts of one Markdown page the documentation checks need: its headings (as the anchors GitHub gives them),
 * its links, its tables and its code blocks. Text inside fenced code blocks and inline code spans is neither a
 * heading nor a link. Only the Markdown this project writes is understood (ATX headings, {@code [text](target)}
 * links, pipe tables, fenced code); that is what the checks are for.
 */
final class MarkdownFile
{
    private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern LINK = Pattern.compile("\\[([^\\]]*)\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern INLINE_CODE = Pattern.compile("`+[^`]*`+");
    private static final Pattern MARKER = Pattern.compile("^<!--\\s*([a-z-]+):\\s*(\\S+)\\s*-->\\s*$");

    /** A link: its target as written, and the line it is on (1-based). */
    record Link(String target, int line)
    {
    }

    /** A block introduced by an HTML comment marker {@code <!-- kind: value -->}: its lines after the marker. */
    record MarkedBlock(String kind, String value, int line, List<String> lines)
    {
    }

    private final Path path;
    private final List<String> lines;
    private final Set<String> anchors = new LinkedHashSet<>();
    private final List<Link> links = new ArrayList<>();
    private final List<MarkedBlock> markedBlocks = new ArrayList<>();

    private MarkdownFile(final Path path, final List<String> lines)
    {
        this.path = path;
        this.lines = lines;
        parse();
    }

    static MarkdownFile read(final Path path)
    {
        try
        {
            return new MarkdownFile(path, Files.readAllLines(path, StandardCharsets.UTF_8));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    Path path()
    {
        return path;
    }

    /** @return the anchors of the page's headings, as GitHub renders them (duplicates numbered -1, -2...). */
    Set<String> anchors()
    {
        return anchors;
    }

    List<Link> links()
    {
        return links;
    }

    /**
     * @return each marker and what follows it: for a code block, the lines inside its fences; for a table, its rows;
     *         else nothing.
     */
    List<MarkedBlock> markedBlocks()
    {
        return markedBlocks;
    }

    /**
     * GitHub's heading anchor: lower case, markup and punctuation removed (letters, digits, spaces, hyphens and
     * underscores kept), spaces turned into hyphens.
     */
    static String anchorOf(final String headingText)
    {
        final String text = LINK.matcher(headingText).replaceAll("$1");
        final StringBuilder anchor = new StringBuilder();
        for (final char c : text.toLowerCase(Locale.ROOT).toCharArray())
        {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_')
            {
                anchor.append(c);
            }
            else if (c == ' ')
            {
                anchor.append('-');
            }
        }
        return anchor.toString();
    }

    private void parse()
    {
        final Map<String, Integer> seen = new HashMap<>();
        boolean inFence = false;
        String fence = null;
        for (int i = 0; i < lines.size(); i++)
        {
            final String line = lines.get(i);
            final String trimmed = line.strip();
            if (inFence)
            {
                final char fenceChar = fence.charAt(0);
                if (trimmed.startsWith(fence) && trimmed.chars().allMatch((c) -> c == fenceChar))
                {
                    inFence = false;
                }
                continue;
            }
            if (trimmed.startsWith("```") || trimmed.startsWith("~~~"))
            {
                inFence = true;
                fence = trimmed.substring(0, 3);
                continue;
            }
            final Matcher heading = HEADING.matcher(line);
            if (heading.matches())
            {
                final String base = anchorOf(heading.group(2));
                final int count = seen.merge(base, 1, Integer::sum);
                anchors.add(count == 1 ? base : base + "-" + (count - 1));
            }
            final Matcher marker = MARKER.matcher(trimmed);
            if (marker.matches())
            {
                markedBlocks.add(new MarkedBlock(marker.group(1), marker.group(2), i + 1, blockAfter(i + 1)));
            }
            final Matcher link = LINK.matcher(INLINE_CODE.matcher(line).replaceAll(""));
            while (link.find())
            {
                links.add(new Link(link.group(2), i + 1));
            }
        }
    }

    private List<String> blockAfter(final int from)
    {
        int i = from;
        while (i < lines.size() && lines.get(i).isBlank())
        {
            i++;
        }
        final List<String> block = new ArrayList<>();
        if (i >= lines.size())
        {
            return block;
        }
        final String first = lines.get(i).strip();
        if (first.startsWith("```"))
        {
            for (int j = i + 1; j < lines.size() && !lines.get(j).strip().equals("```"); j++)
            {
                block.add(lines.get(j));
            }
        }
        else if (first.startsWith("|"))
        {
            for (int j = i; j < lines.size() && lines.get(j).strip().startsWith("|"); j++)
            {
                block.add(lines.get(j));
            }
        }
        return block;
    }
}
