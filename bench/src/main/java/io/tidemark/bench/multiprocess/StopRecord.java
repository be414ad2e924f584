package io.tidemark.bench.multiprocess;

import java.util.ArrayList;
import java.util.List;

/**
 * How a {@link LoadTarget}'s server processes stopped, in words for the report, and which of those stops were
 * problems (a server killed, or gone before the stop). A target adds to it as it closes; not thread-safe.
 */
final class StopRecord
{
    private final List<String> all = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    /** @param text how a server stopped (or another event of its life worth reporting). */
    void note(final String text)
    {
        all.add(text);
    }

    /** @param text how a server stopped, a problem: also listed among {@link #problems()}. */
    void problem(final String text)
    {
        all.add(text);
        problems.add(text);
    }

    /** @return every stop noted, in order. */
    List<String> all()
    {
        return all;
    }

    /** @return the stops that were problems. */
    List<String> problems()
    {
        return problems;
    }
}
