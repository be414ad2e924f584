package io.tidemark.cli;

import io.tidemark.store.inspect.LogInspector;
import io.tidemark.store.RecordBatch;
import io.tidemark.store.RecordView;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code tidemark dump}: batches and records of a segment or a whole log, and optionally its indexes. */
@Command(
    name = "dump",
    mixinStandardHelpOptions = true,
    description = {
        "Print the batches of a segment file or of every segment of a log directory, with their position, " +
            "offsets, leader epoch, timestamps, producer fields and CRC status, and their records.",
        "Reads the files without taking the lock and changes nothing: it works on the log of a running process.",
        "Exit code: 0 when every batch (and with --index every index entry) checks out, 1 when damage was shown, " +
            "3 when the path is missing or not a log."},
    sortOptions = false)
final class DumpCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "<segment or log dir>",
        description = "A log directory, or one of its .log, .index or .timeindex files.")
    Path path;

    @Option(names = "--index", description = "Also print the offset and time index entries and check each one " +
        "against the batches.")
    boolean index;

    @Option(names = "--no-records", negatable = false, description = "Print batches only, not their records.")
    boolean noRecords;

    @Option(names = "--max-value-bytes", paramLabel = "N", defaultValue = "64",
        description = "Show at most N bytes of each key and value (default: ${DEFAULT-VALUE}).")
    int maxValueBytes;

    @Option(names = "--from-offset", paramLabel = "OFFSET",
        description = "Skip batches that end before this offset (and the segments before the one holding it).")
    Long fromOffset;

    @Option(names = "--max-batches", paramLabel = "N", defaultValue = "" + DEFAULT_MAX_BATCHES,
        description = "Print at most N batches in all, then stop reading (default: ${DEFAULT-VALUE}).")
    long maxBatches;

    @Option(names = "--max-records", paramLabel = "N", defaultValue = "" + DEFAULT_MAX_RECORDS,
        description = "Print at most N records in all, then stop reading (default: ${DEFAULT-VALUE}).")
    long maxRecords;

    @Option(names = "--all", description = "No limit: print every batch and record.")
    boolean all;

    /** Default of --max-batches: a screenful of structure, never a whole production log by accident. */
    static final long DEFAULT_MAX_BATCHES = 100;
    /** Default of --max-records. */
    static final long DEFAULT_MAX_RECORDS = 1000;

    @Override
    public Integer call()
    {
        if (maxValueBytes < 0 || maxBatches < 0 || maxRecords < 0)
        {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "--max-value-bytes, --max-batches and --max-records must be >= 0");
        }
        final PrintWriter out = spec.commandLine().getOut();
        final Path dir = Inspect.directoryOf(path);
        final LogInspector inspector = LogInspector.open(dir);
        List<LogInspector.SegmentInfo> segments = inspector.segments();
        boolean showIndex = index;
        if (!dir.equals(path))
        {
            final LogInspector.SegmentInfo segment = inspector.segmentOf(path);
            if (null == segment)
            {
                throw new CliException(ExitCodes.IO, path + " is not a segment file of " + dir +
                    " (expected <20-digit base offset>.log, .index or .timeindex with its .log beside it)");
            }
            segments = List.of(segment);
            showIndex |= !path.getFileName().toString().endsWith(".log");
        }
        out.println("Log directory " + dir.toAbsolutePath().normalize());
        Inspect.describeState(inspector, out);

        final Totals totals = new Totals();
        int read = 0;
        int skipped = 0;
        for (int i = 0; i < segments.size(); i++)
        {
            final LogInspector.SegmentInfo segment = segments.get(i);
            if (null != fromOffset && !showIndex && i + 1 < segments.size() &&
                segments.get(i + 1).baseOffset() <= fromOffset)
            {
                skipped++; // every offset of this segment is below --from-offset: not read
                continue;
            }
            if (!showIndex && limitReached(totals))
            {
                break; // --index checks every segment's entries against its batches: read on
            }
            read++;
            dumpSegment(inspector, segment, showIndex, out, totals);
        }
        final int notRead = segments.size() - read - skipped;
        final boolean partial = totals.readStopped || read + skipped < segments.size();
        out.println("Summary" + (partial ? " of what was read" : "") + ": " + (read == segments.size() ?
            segments.size() + " segment(s)" : read + " of " + segments.size() + " segment(s) read") + ", " + totals.batches + " valid batch(es), " +
            totals.records + " record(s), " + totals.damaged + " damaged batch(es)" +
            (totals.garbage > 0 ? ", " + totals.garbage + " segment(s) with bytes after the data" : "") +
            (showIndex ? ", " + totals.indexMismatches + " index mismatch(es)" : ""));
        if (totals.stopped)
        {
            out.println("Stopped at the limit of " + (totals.shownBatches >= maxBatches ? maxBatches + " batch(es)" :
                maxRecords + " record(s)") + " printed" + (notRead > 0 ? " (" + notRead + " more segment(s) not read)" :
                "") + (partial ? "" : " (--index: every batch was read to check the indexes)") +
                ": --max-batches N, --max-records N or --all print more; `tidemark verify` checks everything.");
        }
        out.flush();
        return totals.damaged + totals.garbage + totals.indexMismatches == 0 ? ExitCodes.OK : ExitCodes.CORRUPT;
    }

    private static final class Totals
    {
        long batches;
        long records;
        long damaged;
        long garbage;
        long indexMismatches;
        long shownBatches;
        long shownRecords;
        boolean stopped;
        boolean readStopped;
    }

    private boolean limitReached(final Totals totals)
    {
        if (!all && (totals.shownBatches >= maxBatches || !noRecords && totals.shownRecords >= maxRecords))
        {
            totals.stopped = true;
        }
        return totals.stopped;
    }

    private void dumpSegment(
        final LogInspector inspector,
        final LogInspector.SegmentInfo segment,
        final boolean showIndex,
        final PrintWriter out,
        final Totals totals)
    {
        out.println("Segment " + segment.log().getFileName() + " (base offset " + segment.baseOffset() + ", " +
            segment.fileSize() + " bytes)");
        final Map<Integer, Long> batchAt = new HashMap<>();
        final List<long[]> boundaries = new ArrayList<>(); // base, next, running max timestamp
        final long[] runningMax = {Long.MIN_VALUE};
        final LogInspector.ScanResult result = inspector.walk(segment, (info, batch) ->
        {
            if (!showIndex && limitReached(totals))
            {
                totals.readStopped = true;
                return false; // stop reading
            }
            if (info.valid())
            {
                batchAt.put(info.position(), info.baseOffset());
                runningMax[0] = Math.max(runningMax[0], info.maxTimestamp());
                boundaries.add(new long[] {info.baseOffset(), info.nextOffset(), runningMax[0]});
                totals.batches++;
                totals.records += info.recordCount();
            }
            else
            {
                totals.damaged++;
            }
            if (info.valid() && null != fromOffset && info.nextOffset() <= fromOffset)
            {
                return true;
            }
            if (limitReached(totals))
            {
                return showIndex; // the index checks need every batch of the segment: read on, print nothing
            }
            totals.shownBatches++;
            printBatch(info, batch, out, totals);
            return true;
        });
        if (result.stopStatus() == RecordBatch.VALID)
        {
            out.println("  stopped at the limit (at position " + result.stopPosition() + " of " +
                result.fileSize() + " bytes)");
        }
        else if (result.stopStatus() == RecordBatch.INCOMPLETE && result.damagedBatches() == 0 ||
            result.stopPosition() >= result.fileSize())
        {
            out.println("  end of data at position " + result.stopPosition() + " (file size " + result.fileSize() +
                "), next offset " + (result.nextOffset() < 0 ? segment.baseOffset() : result.nextOffset()));
        }
        else
        {
            out.println("  no valid batch after position " + result.stopPosition() + " (file size " +
                result.fileSize() + ")");
        }
        if (result.dataEnd() > result.stopPosition())
        {
            totals.garbage++;
            out.println("  ! " + (result.dataEnd() - result.stopPosition()) + " non-zero byte(s) after position " +
                result.stopPosition() + " (up to " + result.dataEnd() + "): a torn write or garbage");
        }
        if (showIndex)
        {
            totals.indexMismatches += dumpOffsetIndex(inspector.offsetIndex(segment), batchAt, out);
            totals.indexMismatches += dumpTimeIndex(inspector.timeIndex(segment), boundaries,
                result.nextOffset() < 0 ? segment.baseOffset() : result.nextOffset(), segment.baseOffset(), out);
        }
    }

    private void printBatch(
        final LogInspector.BatchInfo info, final RecordBatch batch, final PrintWriter out, final Totals totals)
    {
        if (!info.valid())
        {
            out.println("  position=" + info.position() + " length=" + info.length() + " DAMAGED: " +
                info.describeStatus() + " (header as read: baseOffset=" + info.baseOffset() + " records=" +
                info.recordCount() + " epoch=" + info.leaderEpoch() + " crc=" + hex(info.crc()) + ")");
            return;
        }
        out.println("  position=" + info.position() + " offsets=" + info.baseOffset() + ".." +
            (info.nextOffset() - 1) + " records=" + info.recordCount() + " length=" + info.length() +
            " epoch=" + info.leaderEpoch() + " firstTimestamp=" + Formats.timestamp(info.firstTimestamp()) +
            " maxTimestamp=" + Formats.timestamp(info.maxTimestamp()) +
            (info.producerId() >= 0 ? " producerId=" + info.producerId() + " producerEpoch=" + info.producerEpoch() +
            " baseSequence=" + info.baseSequence() : "") + " crc=" + hex(info.crc()) + " valid");
        if (!noRecords)
        {
            final int[] left = {0};
            batch.forEachRecord((RecordView record) ->
            {
                if (!all && totals.shownRecords >= maxRecords)
                {
                    left[0]++;
                    return;
                }
                totals.shownRecords++;
                out.println("    offset=" + record.offset() + " timestamp=" +
                    Formats.timestamp(record.timestamp()) + " key=" +
                    Formats.display(record.buffer(), record.keyOffset(), record.keyLength(), maxValueBytes) +
                    " value=" +
                    Formats.display(record.buffer(), record.valueOffset(), record.valueLength(), maxValueBytes) +
                    (record.headersLength() > 0 ? " headers=" + headers(record) : ""));
            });
            if (left[0] > 0)
            {
                out.println("    ... " + left[0] + " more record(s) in this batch");
            }
        }
    }

    private String headers(final RecordView record)
    {
        final StringBuilder text = new StringBuilder("{");
        final io.tidemark.store.format.HeadersDecoder headers = record.headers();
        while (headers.next())
        {
            if (text.length() > 1)
            {
                text.append(", ");
            }
            text.append(Formats.escape(headers.key())).append('=').append(
                Formats.display(headers.buffer(), headers.valueOffset(), headers.valueLength(), maxValueBytes));
        }
        return text.append('}').toString();
    }

    private static int dumpOffsetIndex(
        final LogInspector.IndexContent index, final Map<Integer, Long> batchAt, final PrintWriter out)
    {
        final String name = index.file().getFileName().toString();
        if (!index.exists())
        {
            out.println("  offset index " + name + ": MISSING");
            return 1;
        }
        out.println("  offset index " + name + ": " + index.entries() + " entr" + (index.entries() == 1 ? "y" : "ies") +
            (index.zeroSlots() > 0 ? " (+" + index.zeroSlots() + " empty pre-allocated slots)" : "") +
            (index.wholeEntries() ? "" : " MISMATCH: " + index.fileSize() + " bytes is not a whole number of " +
            LogInspector.OFFSET_INDEX_ENTRY_LENGTH + "-byte entries"));
        int mismatches = index.wholeEntries() ? 0 : 1;
        for (int i = 0; i < index.entries(); i++)
        {
            final long offset = index.offsets()[i];
            final long position = index.values()[i];
            final Long at = position >= 0 && position <= Integer.MAX_VALUE ? batchAt.get((int)position) : null;
            final String check;
            if (i > 0 && (offset <= index.offsets()[i - 1] || position <= index.values()[i - 1]))
            {
                check = "MISMATCH: out of order";
            }
            else if (null == at)
            {
                check = "MISMATCH: no valid batch starts at position " + position;
            }
            else if (at != offset)
            {
                check = "MISMATCH: the batch at position " + position + " starts at offset " + at;
            }
            else
            {
                check = "ok";
            }
            mismatches += check.equals("ok") ? 0 : 1;
            out.println("    entry " + i + ": offset " + offset + " -> position " + position + "  " + check);
        }
        return mismatches;
    }

    private static int dumpTimeIndex(
        final LogInspector.IndexContent index,
        final List<long[]> boundaries,
        final long endOffset,
        final long baseOffset,
        final PrintWriter out)
    {
        final String name = index.file().getFileName().toString();
        if (!index.exists())
        {
            out.println("  time index " + name + ": MISSING");
            return 1;
        }
        out.println("  time index " + name + ": " + index.entries() + " entr" + (index.entries() == 1 ? "y" : "ies") +
            (index.zeroSlots() > 0 ? " (+" + index.zeroSlots() + " empty pre-allocated slots)" : "") +
            (index.wholeEntries() ? "" : " MISMATCH: " + index.fileSize() + " bytes is not a whole number of " +
            LogInspector.TIME_INDEX_ENTRY_LENGTH + "-byte entries"));
        int mismatches = index.wholeEntries() ? 0 : 1;
        for (int i = 0; i < index.entries(); i++)
        {
            final long timestamp = index.values()[i];
            final long offset = index.offsets()[i];
            long maxBefore = Long.MIN_VALUE;
            boolean boundary = offset == endOffset || offset == baseOffset;
            for (final long[] b : boundaries)
            {
                if (b[1] <= offset)
                {
                    maxBefore = b[2];
                }
                boundary |= b[0] == offset;
            }
            final String check;
            if (i > 0 && (offset <= index.offsets()[i - 1] || timestamp <= index.values()[i - 1]))
            {
                check = "MISMATCH: out of order";
            }
            else if (offset > endOffset)
            {
                check = "MISMATCH: beyond the segment's end offset " + endOffset;
            }
            else if (!boundary)
            {
                check = "MISMATCH: offset " + offset + " is not a batch boundary";
            }
            else if (maxBefore > timestamp)
            {
                check = "MISMATCH: a record below offset " + offset + " has timestamp " +
                    Formats.timestamp(maxBefore);
            }
            else
            {
                check = "ok";
            }
            mismatches += check.equals("ok") ? 0 : 1;
            out.println("    entry " + i + ": timestamp " + Formats.timestamp(timestamp) + " -> offset " + offset +
                "  " + check);
        }
        return mismatches;
    }

    private static String hex(final int crc)
    {
        return String.format("0x%08x", crc);
    }
}
