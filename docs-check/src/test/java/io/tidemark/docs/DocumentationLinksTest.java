package io.tidemark.docs;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every relative link of README.md and docs/*.md resolves: the file or directory exists, and an {@code #anchor}
 * names a heading of the target page (or of the same page). Links to other sites are not followed.
 */
class DocumentationLinksTest
{
    @Test
    void everyRelativeLinkResolvesToAFileAndEveryAnchorToAHeading()
    {
        final List<MarkdownFile> pages = Repository.pages();
        final Map<Path, MarkdownFile> byPath = new HashMap<>();
        pages.forEach((page) -> byPath.put(page.path().normalize(), page));
        final List<String> broken = new ArrayList<>();
        int checked = 0;
        for (final MarkdownFile page : pages)
        {
            for (final MarkdownFile.Link link : page.links())
            {
                final String target = link.target();
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*"))
                {
                    continue; // https:, mailto: ...
                }
                checked++;
                final int hash = target.indexOf('#');
                final String file = hash < 0 ? target : target.substring(0, hash);
                final String anchor = hash < 0 ? null : target.substring(hash + 1);
                final Path resolved = file.isEmpty() ? page.path() : page.path().getParent().resolve(file).normalize();
                final String where = Repository.name(page.path()) + ":" + link.line() + " (" + target + ")";
                if (!Files.exists(resolved))
                {
                    broken.add(where + ": no file " + Repository.name(resolved));
                    continue;
                }
                if (null != anchor)
                {
                    if (!resolved.toString().endsWith(".md"))
                    {
                        broken.add(where + ": an anchor into a file that is not Markdown");
                        continue;
                    }
                    final MarkdownFile targetPage = byPath.computeIfAbsent(resolved, MarkdownFile::read);
                    if (!targetPage.anchors().contains(anchor))
                    {
                        broken.add(where + ": no heading #" + anchor + " in " + Repository.name(resolved) +
                            "; its anchors are " + targetPage.anchors());
                    }
                }
            }
        }
        assertTrue(checked > 50, "only " + checked + " relative links found: is the parser still reading the pages?");
        assertEquals(List.of(), broken, "broken links");
    }

    @Test
    void anchorsAreTheOnesGitHubRenders()
    {
        assertEquals("store-logcontext", MarkdownFile.anchorOf("Store (`LogContext`)"));
        assertEquals("producing-acks-and-mininsyncreplicas",
            MarkdownFile.anchorOf("Producing: acks and min.insync.replicas"));
        assertEquals("operating-a-log-the-tidemark-command",
            MarkdownFile.anchorOf("Operating a log: the `tidemark` command"));
        assertEquals("multi-process-three-host-jvms-on-loopback",
            MarkdownFile.anchorOf("Multi-process: three host JVMs on loopback"));
        assertEquals("see-store", MarkdownFile.anchorOf("See [store](docs/store.md)"));
    }
}
