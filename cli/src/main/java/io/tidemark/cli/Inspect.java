package io.tidemark.cli;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.inspect.LogInspector;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** Opening a log directory (or a segment file in one) read-only, and describing its state files. */
final class Inspect
{
    private Inspect()
    {
    }

    /** @return the log directory of a path that is one, or a segment or index file inside one. */
    static Path directoryOf(final Path path)
    {
        if (!Files.exists(path))
        {
            throw new CliException(ExitCodes.IO, "no such file or directory: " + path);
        }
        if (Files.isDirectory(path))
        {
            return path;
        }
        final Path parent = path.toAbsolutePath().getParent();
        return null == parent ? path : parent;
    }

    static void describeState(final LogInspector inspector, final PrintWriter out)
    {
        final LogInspector.Meta meta = inspector.meta();
        out.println("  " + LogInspector.META_FILE + ": " + meta.status() +
            (meta.status() == CheckpointFile.Status.OK ? " (created " + Formats.timestamp(meta.creationTimeMs()) + ")" :
            ""));
        final LogInspector.Checkpoint checkpoint = inspector.checkpoint();
        out.println("  " + LogInspector.CHECKPOINT_FILE + ": " + checkpoint.status() +
            (checkpoint.status() == CheckpointFile.Status.OK ? " (recovery point " + checkpoint.recoveryPoint() +
            ", log start offset " + checkpoint.logStartOffset() + ")" : ""));
        final long pid = inspector.lockOwnerPid();
        final String owner;
        if (inspector.lockOwnerRunning())
        {
            owner = "open in running process " + pid + " (the files may change while they are read)";
        }
        else
        {
            owner = inspector.cleanShutdownMarker() ? "closed cleanly" :
                "not closed cleanly (the next open runs recovery)";
        }
        out.println("  state: " + owner);
    }
}
