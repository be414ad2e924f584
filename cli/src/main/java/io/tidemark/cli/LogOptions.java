package io.tidemark.cli;

import io.tidemark.store.LogContext;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code --config key=value}: the log's configuration keys (LogContext), as the application gives them. */
final class LogOptions
{
    @Option(names = {"-c", "--config"}, paramLabel = "KEY=VALUE",
        description = "A log configuration key (segment.bytes, index.interval.bytes, flush.interval.ms, ...); " +
            "repeatable. Give the application's values where they matter (segment.bytes sizes the active " +
            "segment file).")
    Map<String, String> config = new LinkedHashMap<>();

    LogContext context(final Path dir)
    {
        return LogContext.fromProperties(dir, config);
    }
}
