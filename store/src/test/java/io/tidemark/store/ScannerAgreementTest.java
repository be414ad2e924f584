package io.tidemark.store;

import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.LogFiles;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;
import io.tidemark.store.inspect.LogInspector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Recovery ({@code Log.open}), verification ({@code LogInspector.walk}, which {@code tidemark verify} and
 * {@code dump} use) and index rebuild ({@code SegmentReplay.replay}) must agree on every damaged segment file: which
 * batches are valid data, where the data ends, and where a walk resumes after damage.
 * <p>
 * Each trial copies a pristine one-segment log, damages its file at random (torn tails, bits flipped in a header,
 * a payload or a CRC, zeroed ranges, garbage or a stale copy of an earlier batch between batches, a truncated
 * index) and then checks:
 * <ul>
 *   <li>verification and index rebuild accept the same batches at the same positions, end at the same position
 *       and the same next offset;</li>
 *   <li>recovery with every offset flushed (the recovery point at the end) serves exactly the batches the walk
 *       accepted, fails every other one with {@code CORRUPT_BATCH} or has lost it, and never serves wrong bytes;</li>
 *   <li>recovery with nothing flushed (the recovery point at 0) truncates exactly where the walk met the first
 *       damage.</li>
 * </ul>
 * The run is seeded: CI repeats the same trials (first seed 20261201, {@value #DEFAULT_TRIES} trials); the long
 * mode ({@code -Plong}) or {@code -Dtidemark.agreement.seed=random} draws fresh ones, and a failure names the seed
 * of its trial ({@code -Dtidemark.agreement.seed=N -Dtidemark.agreement.tries=1} repeats it).
 */
class ScannerAgreementTest
{
    private static final int DEFAULT_TRIES = 150;
    private static final int TRIES = Integer.getInteger("tidemark.agreement.tries",
        CrashSupport.scale(DEFAULT_TRIES, 5000));
    private static final int MAX_INDEX_ENTRIES = 1 << 14;

    @TempDir
    Path root;

    /** A batch as written, or as a walk accepted it. */
    record Batch(int position, long base, int count)
    {
    }

    /** What one of the walks made of a file. */
    record Outcome(List<Batch> accepted, long stopPosition, long nextOffset)
    {
    }

    private static LogContext context(final Path dir)
    {
        return new LogContext()
            .logDir(dir)
            .segmentBytes(1024 * 1024)
            .segmentIndexBytes(64 * 1024)
            .indexIntervalBytes(512)
            .maxMessageBytes(CrashRecords.MAX_MESSAGE_BYTES)
            .agentMode(LogContext.AgentMode.INVOKER);
    }

    @Test
    void recoveryVerificationAndIndexRebuildAgreeOnDamagedFiles() throws IOException
    {
        final String property = System.getProperty("tidemark.agreement.seed");
        final long first = "random".equals(property) || (null == property && CrashSupport.LONG) ?
            System.nanoTime() : null == property ? 20261201L : Long.parseLong(property);
        System.out.println("scanner agreement: first seed " + first + ", " + TRIES + " trials");

        final Path template = root.resolve("template");
        final Log log = Log.open(context(template));
        final Random content = new Random(7);
        while (log.logEndOffset() < 400)
        {
            CrashRecords.appendRandom(log, content);
        }
        final long end = log.logEndOffset();
        log.close();
        final Path templateLog = new SegmentFiles(template, 0).log();
        final List<Batch> written = new ArrayList<>();
        for (final CrashFiles.Batch batch : CrashFiles.scanOne(templateLog).batches())
        {
            written.add(new Batch(batch.position(), batch.base(), batch.count()));
        }
        assertEquals(end, written.get(written.size() - 1).base() + written.get(written.size() - 1).count());

        final List<String> failures = new ArrayList<>();
        for (long seed = first; seed < first + TRIES; seed++)
        {
            final Path dir = root.resolve("trial-" + seed);
            CrashFiles.copyDir(template, dir);
            Files.deleteIfExists(dir.resolve(LogFiles.CLEAN_SHUTDOWN_FILE));
            final String damage = damage(dir, written, new Random(seed));
            final String problem = check(dir, written, end);
            if (null != problem)
            {
                failures.add("seed " + seed + " (-Dtidemark.agreement.seed=" + seed +
                    " -Dtidemark.agreement.tries=1), damage [" + damage + "]: " + problem);
            }
            CrashSupport.deleteTree(dir);
        }
        assertEquals(0, failures.size(), failures.size() + " of " + TRIES + " trials disagree (first seed " + first +
            "):\n" + String.join("\n", failures.subList(0, Math.min(10, failures.size()))));
    }

    // ------------------------------------------------------------------------------------------------------------
    // Damage
    // ------------------------------------------------------------------------------------------------------------

    private static String damage(final Path dir, final List<Batch> written, final Random random) throws IOException
    {
        final SegmentFiles files = new SegmentFiles(dir, 0);
        final Path log = files.log();
        final StringBuilder what = new StringBuilder();
        final int count = 1 + random.nextInt(3);
        boolean torn = false;
        for (int i = 0; i < count; i++)
        {
            final long length = Files.size(log);
            final Batch batch = written.get(random.nextInt(written.size()));
            final int batchLength = frameEnd(written, batch) - batch.position();
            final int kind = random.nextInt(9);
            if (batch.position() >= length && kind != 8)
            {
                continue;
            }
            switch (kind)
            {
                case 0 ->
                {
                    if (torn)
                    {
                        continue;
                    }
                    torn = true;
                    final long at = batch.position() + random.nextInt(batchLength + 1);
                    CrashFiles.cut(log, Math.min(at, length));
                    what.append("torn tail at ").append(Math.min(at, length));
                }
                case 1 ->
                {
                    final long at = batch.position() + random.nextInt(RecordBatchDescriptor.HEADER_LENGTH);
                    flip(log, at, random, what, "header");
                }
                case 2 ->
                {
                    final long at = batch.position() + RecordBatchDescriptor.HEADER_LENGTH +
                        random.nextInt(batchLength - RecordBatchDescriptor.HEADER_LENGTH);
                    flip(log, at, random, what, "payload");
                }
                case 3 ->
                {
                    final long at = batch.position() + RecordBatchDescriptor.CRC_OFFSET + random.nextInt(4);
                    flip(log, at, random, what, "crc");
                }
                case 4, 5 ->
                {
                    final long from = batch.position() + (random.nextBoolean() ? 0 : random.nextInt(batchLength));
                    final long to = Math.min(length, from + 1 + random.nextInt(2 * batchLength));
                    CrashFiles.zero(log, from, to);
                    what.append("zeros [").append(from).append(", ").append(to).append(")");
                }
                case 6 ->
                {
                    final int size = 1 + random.nextInt(200);
                    final byte[] garbage = new byte[size];
                    random.nextBytes(garbage);
                    final long at = random.nextBoolean() ? batch.position() :
                        batch.position() + random.nextInt(batchLength);
                    CrashFiles.write(log, at, trim(garbage, length - at));
                    what.append("garbage [").append(at).append(", ").append(at + Math.min(size, length - at))
                        .append(")");
                }
                case 7 ->
                {
                    // A stale copy of an earlier batch where a later one starts: a CRC-valid batch that goes back in
                    // offsets (a disk that returned an old block, a copy gone wrong).
                    final Batch earlier = written.get(random.nextInt(written.indexOf(batch) + 1));
                    if (earlier == batch)
                    {
                        continue;
                    }
                    final byte[] bytes = new byte[frameEnd(written, earlier) - earlier.position()];
                    try (var channel = java.nio.channels.FileChannel.open(log, java.nio.file.StandardOpenOption.READ))
                    {
                        channel.read(java.nio.ByteBuffer.wrap(bytes), earlier.position());
                    }
                    CrashFiles.write(log, batch.position(), trim(bytes, length - batch.position()));
                    what.append("stale copy of batch ").append(earlier.base()).append(" at ")
                        .append(batch.position());
                }
                default ->
                {
                    final long indexLength = Files.size(files.offsetIndex());
                    final long cut = indexLength == 0 ? 0 : random.nextInt((int)indexLength);
                    CrashFiles.cut(files.offsetIndex(), cut);
                    what.append("index cut to ").append(cut);
                }
            }
            what.append("; ");
        }
        return what.toString().trim();
    }

    private static int frameEnd(final List<Batch> written, final Batch batch)
    {
        final int i = written.indexOf(batch);
        if (i + 1 < written.size())
        {
            return written.get(i + 1).position();
        }
        return batch.position() + RecordBatchDescriptor.HEADER_LENGTH + 8; // the last batch: at least its header
    }

    private static byte[] trim(final byte[] bytes, final long room)
    {
        return room >= bytes.length ? bytes : java.util.Arrays.copyOf(bytes, (int)Math.max(0, room));
    }

    private static void flip(
        final Path log, final long at, final Random random, final StringBuilder what, final String where)
        throws IOException
    {
        if (at >= Files.size(log))
        {
            what.append("(flip past the end)");
            return;
        }
        final int bit = random.nextInt(8);
        CrashFiles.flipBit(log, at, bit);
        what.append("bit ").append(bit).append(" flipped at ").append(at).append(" (").append(where).append(")");
    }

    // ------------------------------------------------------------------------------------------------------------
    // The three walks
    // ------------------------------------------------------------------------------------------------------------

    private String check(final Path dir, final List<Batch> written, final long end) throws IOException
    {
        final Outcome verified = verify(dir);
        final Outcome rebuilt = rebuild(dir);
        final List<String> problems = new ArrayList<>();
        final List<String> verifiedAfterFirst = verified.accepted().stream().filter((b) -> b.position() > 0)
            .map(ScannerAgreementTest::key).toList();
        final List<String> rebuiltKeys = rebuilt.accepted().stream().map(ScannerAgreementTest::key).toList();
        if (!verifiedAfterFirst.equals(rebuiltKeys))
        {
            problems.add("verify and index rebuild accept different batches (position@base; position 0 not " +
                "compared): " + firstDifference(verifiedAfterFirst, rebuiltKeys));
        }
        if (verified.stopPosition() != rebuilt.stopPosition() || verified.nextOffset() != rebuilt.nextOffset())
        {
            problems.add("verify stopped at position " + verified.stopPosition() + " (next offset " +
                verified.nextOffset() + "), index rebuild at " + rebuilt.stopPosition() + " (next offset " +
                rebuilt.nextOffset() + ")");
        }

        // Recovery with every offset flushed: the accepted batches are served, nothing else is.
        final Set<String> accepted = new HashSet<>();
        for (final Batch batch : verified.accepted())
        {
            accepted.add(key(batch));
        }
        final Path flushed = root.resolve(dir.getFileName() + "-flushed");
        CrashFiles.copyDir(dir, flushed);
        CrashFiles.writeCheckpoint(flushed, end, 0);
        final String flushedProblem = recover(flushed, written, accepted, Long.MAX_VALUE, "recovery (flushed)");
        if (null != flushedProblem)
        {
            problems.add(flushedProblem);
        }
        CrashSupport.deleteTree(flushed);

        // Recovery with nothing flushed: truncated at the first damage the walk met.
        final Set<String> prefix = new HashSet<>();
        long prefixEnd = 0;
        int expectedPosition = 0;
        for (final Batch batch : verified.accepted())
        {
            if (batch.position() != expectedPosition || batch.base() != prefixEnd)
            {
                break;
            }
            prefix.add(key(batch));
            prefixEnd = batch.base() + batch.count();
            final int index = written.indexOf(batch);
            expectedPosition = index >= 0 && index + 1 < written.size() ? written.get(index + 1).position() : -1;
        }
        final Path unflushed = root.resolve(dir.getFileName() + "-unflushed");
        CrashFiles.copyDir(dir, unflushed);
        CrashFiles.writeCheckpoint(unflushed, 0, 0);
        final String unflushedProblem = recover(unflushed, written, prefix, prefixEnd, "recovery (unflushed)");
        if (null != unflushedProblem)
        {
            problems.add(unflushedProblem);
        }
        CrashSupport.deleteTree(unflushed);
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    /** The walk {@code tidemark verify} and {@code dump} make. */
    private static Outcome verify(final Path dir)
    {
        final LogInspector inspector = LogInspector.open(dir);
        final LogInspector.SegmentInfo segment = inspector.segments().get(0);
        final List<Batch> accepted = new ArrayList<>();
        final long[] next = { 0 };
        final LogInspector.ScanResult result = inspector.walk(segment, (info, batch) ->
        {
            if (info.valid())
            {
                accepted.add(new Batch(info.position(), info.baseOffset(), info.recordCount()));
                next[0] = Math.max(next[0], info.nextOffset());
            }
            return true;
        });
        return new Outcome(accepted, result.stopPosition(), next[0]);
    }

    /** The index rebuild of a segment (every batch gets an entry: interval 0). */
    private Outcome rebuild(final Path dir) throws IOException
    {
        final Path copy = root.resolve(dir.getFileName() + "-rebuild");
        CrashFiles.copyDir(dir, copy);
        try
        {
            final Segment segment = SegmentOpener.openSealed(new SegmentFiles(copy, 0), MAX_INDEX_ENTRIES, true);
            try
            {
                segment.resetState(segment.size(), 0, Long.MIN_VALUE, 0);
                final int stop = SegmentReplay.replay(segment, 0, segment.size(), 0, true, new Crc32c(), true);
                final List<Batch> accepted = new ArrayList<>();
                final OffsetIndex index = segment.offsetIndex();
                for (int i = 0; i < index.entries(); i++)
                {
                    final long base = index.offsetAt(i);
                    final long next = i + 1 < index.entries() ? index.offsetAt(i + 1) : segment.endOffset();
                    accepted.add(new Batch(index.positionAt(i), base, (int)(next - base)));
                }
                return new Outcome(accepted, Math.min(stop, segment.size()), segment.endOffset());
            }
            finally
            {
                segment.close();
            }
        }
        finally
        {
            CrashSupport.deleteTree(copy);
        }
    }

    /**
     * Open the log (recovering it) and read every written batch: those in {@code served} must read back exactly,
     * every other must fail with CORRUPT_BATCH or be gone; the log must end at {@code expectedEnd} (unless it is
     * Long.MAX_VALUE: a damaged last batch keeps its offsets, so the end is not compared).
     */
    private static String recover(
        final Path dir, final List<Batch> written, final Set<String> served, final long expectedEnd,
        final String who)
    {
        final Log log;
        try
        {
            log = Log.open(context(dir));
        }
        catch (final StorageException ex)
        {
            return who + " refused the open: " + ex;
        }
        try
        {
            final List<String> problems = new ArrayList<>();
            if (expectedEnd != Long.MAX_VALUE && log.logEndOffset() != expectedEnd)
            {
                problems.add("log end " + log.logEndOffset() + " where the walk's valid prefix ends at " + expectedEnd);
            }
            for (final Batch batch : written)
            {
                final boolean expected = served.contains(key(batch));
                final char got = read(log, batch);
                if (got == 'W')
                {
                    problems.add("batch " + batch + " served wrong bytes");
                }
                else if (expected != (got == 'R'))
                {
                    problems.add("batch " + batch + (expected ? " accepted by the walk but " :
                        " rejected by the walk but ") +
                        (got == 'R' ? "served" : got == 'C' ? "fails with CORRUPT_BATCH" : "is gone"));
                }
            }
            return problems.isEmpty() ? null : who + ": " + String.join(", ", problems.subList(0,
                Math.min(4, problems.size()))) + (problems.size() > 4 ? " (+" + (problems.size() - 4) + ")" : "") +
                " " + log.recoveryReport().notes();
        }
        finally
        {
            log.close();
        }
    }

    /** @return where two lists of accepted batches part, with a little context. */
    private static String firstDifference(final List<String> verify, final List<String> rebuild)
    {
        int i = 0;
        while (i < verify.size() && i < rebuild.size() && verify.get(i).equals(rebuild.get(i)))
        {
            i++;
        }
        final int from = Math.max(0, i - 1);
        return "after " + i + " equal, verify " + verify.subList(from, Math.min(verify.size(), i + 2)) + " of " +
            verify.size() + ", index rebuild " + rebuild.subList(from, Math.min(rebuild.size(), i + 2)) + " of " +
            rebuild.size();
    }

    /** @return a batch's position and base offset (what the walks are compared on; record counts are not). */
    private static String key(final Batch batch)
    {
        return batch.position() + "@" + batch.base();
    }

    /** @return R when the batch reads back exactly, C on CORRUPT_BATCH, G when gone, W when wrong bytes came. */
    private static char read(final Log log, final Batch batch)
    {
        if (batch.base() >= log.logEndOffset() || batch.base() < log.logStartOffset())
        {
            return 'G';
        }
        final long last = batch.base() + batch.count();
        final long[] next = { batch.base() };
        final boolean[] wrong = { false };
        try (LogReader reader = log.openReader())
        {
            reader.seek(batch.base());
            while (next[0] < last && reader.poll((r) ->
            {
                wrong[0] |= r.offset() != next[0] || !CrashRecords.matches(r, next[0]);
                next[0]++;
            }, last, 64) > 0)
            {
                // read on
            }
        }
        catch (final StorageException ex)
        {
            if (next[0] > batch.base())
            {
                return 'W';
            }
            return ex.code() == StorageErrorCode.CORRUPT_BATCH ? 'C' : 'G';
        }
        return wrong[0] ? 'W' : next[0] == last ? 'R' : 'G';
    }
}
