package io.tidemark.cli;

import java.util.Arrays;

/** Stands in for tidemark-bench.jar in {@link BenchCommandTest}: prints its arguments, exits as told. */
public final class FakeBench
{
    private FakeBench()
    {
    }

    /**
     * @param args "exit N" exits with N; anything else is printed.
     */
    public static void main(final String[] args)
    {
        System.out.println("fake bench: " + Arrays.toString(args));
        System.err.println("fake bench stderr");
        if (args.length == 2 && "exit".equals(args[0]))
        {
            System.exit(Integer.parseInt(args[1]));
        }
    }
}
