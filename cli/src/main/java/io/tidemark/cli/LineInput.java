package io.tidemark.cli;

import picocli.CommandLine.Option;

import java.io.BufferedReader;

/**
 * {@code --input} and {@code --key-separator}: where the records of {@code produce} and {@code send} come from, one
 * per line (UTF-8), and how a line splits into key and value. A picocli mixin.
 */
final class LineInput
{
    @Option(names = {"-k", "--key-separator"}, paramLabel = "SEP",
        description = "Split each line at the first SEP into key and value.")
    String keySeparator;

    @Option(names = {"-i", "--input"}, paramLabel = "FILE", defaultValue = "-",
        description = "Read lines from FILE instead of stdin ('-').")
    String input;

    /**
     * @return the lines: of {@code --input}, or stdin (left open when the reader closes).
     * @throws CliException when the file is missing or cannot be read.
     */
    BufferedReader open()
    {
        return Lines.open(input, System.in);
    }
}
