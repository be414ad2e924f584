package io.tidemark.store;

import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.LogFiles;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Part 4 of the crash suite: bad files. Garbage, empty, truncated and oversized index files, checkpoint files and
 * segment files; bad segment file names; a batch header claiming an absurd length; segment files absurdly long;
 * directories that are not logs; a clean-shutdown marker that lies. Each is applied to a copy of a healthy log
 * (closed cleanly, or crashed with an unflushed tail) and the open must either repair it as the store documents
 * (indexes rebuilt, leftovers deleted, a torn tail above the recovery point truncated, a damaged batch below it
 * kept and unreadable) and then read back exactly what was appended and accept appends, or refuse with a typed
 * {@link StorageException} whose code fits and whose message (or cause) names the culprit. Never an unchecked
 * exception from deep inside, never a JVM crash (a crash would fail the whole build). Long mode repeats the
 * table with fresh random garbage 20 times.
 */
class CrashBadFilesTest
{
    private static final int RECORDS = 3000;

    @TempDir
    Path root;

    /** A healthy log to damage: its files as they are and what it holds. */
    record Healthy(Path dir, boolean clean, long end, long recoveryPoint, List<CrashFiles.SegmentScan> scans)
    {
        CrashFiles.SegmentScan active()
        {
            return scans.get(scans.size() - 1);
        }

        CrashFiles.SegmentScan sealed()
        {
            return scans.get(1);
        }

        Path file(final Path original)
        {
            return dir.resolve(original.getFileName());
        }
    }

    /** What the open of a damaged log must do. */
    interface Expect
    {
    }

    /** Open, then hold exactly the records {@code [0, end)}. */
    record Repaired(long end) implements Expect
    {
    }

    /** Open with the log end unchanged and the damaged batch unreadable (typed); never serve wrong bytes. */
    record KeptDamaged(long damagedBase, long end) implements Expect
    {
    }

    /** Refuse with one of these codes, naming {@code mention} in the message or its causes. */
    record Refused(Set<StorageErrorCode> codes, String mention) implements Expect
    {
    }

    interface Damage
    {
        Expect apply(Healthy log, Random random) throws IOException;
    }

    /** A damage, the log state it applies to, and where to open the log (a subdirectory, or null). */
    record Case(String name, boolean clean, Damage damage, String openSubdir)
    {
        Case(final String name, final boolean clean, final Damage damage)
        {
            this(name, clean, damage, null);
        }
    }

    static Refused refused(final String mention, final StorageErrorCode... codes)
    {
        return new Refused(EnumSet.of(codes[0], codes), mention);
    }

    private Healthy healthy(final String name, final boolean clean) throws IOException
    {
        final Path dir = root.resolve("healthy-" + name);
        final Random random = new Random(11);
        final Log log = Log.open(CrashRecords.testContext(dir));
        while (log.logEndOffset() < RECORDS * 2 / 3)
        {
            CrashRecords.appendRandom(log, random);
        }
        log.flush();
        while (log.logEndOffset() < RECORDS)
        {
            CrashRecords.appendRandom(log, random);
        }
        final long end = log.logEndOffset();
        final long recoveryPoint;
        if (clean)
        {
            log.close();
            recoveryPoint = end;
        }
        else
        {
            recoveryPoint = log.recoveryPoint();
            log.halt();
        }
        return new Healthy(dir, clean, end, recoveryPoint, CrashFiles.scan(dir));
    }

    private static byte[] garbage(final Random random, final int length)
    {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    /** Index damage that must be repaired by a rebuild, for a given index file of a given segment. */
    private static List<Case> indexCases(final String which, final boolean active, final boolean offsetIndex)
    {
        final List<Case> cases = new ArrayList<>();
        for (final boolean clean : new boolean[]{ true, false })
        {
            final String prefix = which + (offsetIndex ? ".index " : ".timeindex ") +
                (clean ? "(clean) " : "(crashed) ");
            final Damage[] damages = {
                (h, r) ->
                {
                    Files.write(index(h, active, offsetIndex), new byte[0]);
                    return new Repaired(h.end());
                },
                (h, r) ->
                {
                    final int entry = offsetIndex ? OffsetIndex.ENTRY_LENGTH : TimeIndex.ENTRY_LENGTH;
                    Files.write(index(h, active, offsetIndex), garbage(r, entry * (1 + r.nextInt(60))));
                    return new Repaired(h.end());
                },
                (h, r) ->
                {
                    Files.write(index(h, active, offsetIndex), garbage(r, 1 + r.nextInt(7)));
                    return new Repaired(h.end());
                },
                (h, r) ->
                {
                    final Path index = index(h, active, offsetIndex);
                    CrashFiles.cut(index, Files.size(index) / 2);
                    return new Repaired(h.end());
                },
                (h, r) ->
                {
                    final Path index = index(h, active, offsetIndex);
                    CrashFiles.cut(index, Math.max(0, Files.size(index) - 3));
                    return new Repaired(h.end());
                },
                (h, r) ->
                {
                    final Path index = index(h, active, offsetIndex);
                    CrashFiles.write(index, Files.size(index), garbage(r, 64 * 1024));
                    return new Repaired(h.end());
                },
                (h, r) ->
                {
                    Files.delete(index(h, active, offsetIndex));
                    return new Repaired(h.end());
                },
            };
            final String[] names = { "empty", "garbage (whole entries)", "garbage (not whole entries)",
                "truncated to half", "truncated mid-entry", "64 KiB garbage appended", "missing" };
            for (int i = 0; i < damages.length; i++)
            {
                cases.add(new Case(prefix + names[i], clean, damages[i]));
            }
            {
                cases.add(new Case(prefix + "extended with zeros to 1 MiB", clean, (h, r) ->
                {
                    CrashFiles.cut(index(h, active, offsetIndex), 1 << 20);
                    return new Repaired(h.end());
                }));
                cases.add(new Case(prefix + "extended (sparse) to 3 GiB", clean, (h, r) ->
                {
                    CrashFiles.cut(index(h, active, offsetIndex), 3L << 30);
                    return new Repaired(h.end());
                }));
            }
        }
        return cases;
    }

    private static Path index(final Healthy h, final boolean active, final boolean offsetIndex)
    {
        final CrashFiles.SegmentScan scan = active ? h.active() : h.sealed();
        return h.file(offsetIndex ? scan.offsetIndex() : scan.timeIndex());
    }

    private static List<Case> cases()
    {
        final List<Case> cases = new ArrayList<>();
        cases.addAll(indexCases("sealed segment", false, true));
        cases.addAll(indexCases("sealed segment", false, false));
        cases.addAll(indexCases("active segment", true, true));
        cases.addAll(indexCases("active segment", true, false));

        for (final boolean clean : new boolean[]{ true, false })
        {
            final String state = clean ? " (clean)" : " (crashed)";
            // Checkpoint files: anything not valid means "recover everything".
            cases.add(new Case("checkpoint garbage" + state, clean, (h, r) ->
            {
                Files.write(h.dir().resolve(LogFiles.CHECKPOINT_FILE), garbage(r, CheckpointDescriptor.LOG_CHECKPOINT_LENGTH));
                return new Repaired(h.end());
            }));
            cases.add(new Case("checkpoint empty" + state, clean, (h, r) ->
            {
                Files.write(h.dir().resolve(LogFiles.CHECKPOINT_FILE), new byte[0]);
                return new Repaired(h.end());
            }));
            cases.add(new Case("checkpoint truncated" + state, clean, (h, r) ->
            {
                CrashFiles.cut(h.dir().resolve(LogFiles.CHECKPOINT_FILE), 1 + r.nextInt(CheckpointDescriptor.LOG_CHECKPOINT_LENGTH - 1));
                return new Repaired(h.end());
            }));
            cases.add(new Case("checkpoint oversized" + state, clean, (h, r) ->
            {
                final Path file = h.dir().resolve(LogFiles.CHECKPOINT_FILE);
                CrashFiles.write(file, Files.size(file), garbage(r, 1 + r.nextInt(4096)));
                return new Repaired(h.end());
            }));
            cases.add(new Case("checkpoint with a bit flipped" + state, clean, (h, r) ->
            {
                CrashFiles.flipBit(h.dir().resolve(LogFiles.CHECKPOINT_FILE), r.nextInt(CheckpointDescriptor.LOG_CHECKPOINT_LENGTH),
                    r.nextInt(8));
                return new Repaired(h.end());
            }));
            cases.add(new Case("checkpoint .tmp left over, garbage" + state, clean, (h, r) ->
            {
                Files.write(h.dir().resolve(LogFiles.CHECKPOINT_FILE + CheckpointDescriptor.TMP_SUFFIX),
                    garbage(r, r.nextInt(100)));
                return new Repaired(h.end());
            }));
            cases.add(new Case("checkpoint is a directory" + state, clean, (h, r) ->
            {
                Files.delete(h.dir().resolve(LogFiles.CHECKPOINT_FILE));
                Files.createDirectory(h.dir().resolve(LogFiles.CHECKPOINT_FILE));
                return refused(LogFiles.CHECKPOINT_FILE, StorageErrorCode.IO_ERROR, StorageErrorCode.CORRUPT_LOG);
            }));

            // Segment file names.
            for (final String bad : new String[]{ "0000000000000000001x.log", "123.log", "000000000000000000000.log",
                "99999999999999999999.log", "-0000000000000000001.log", "0000000000000000abcd.index",
                "00000000000000000001 .timeindex" })
            {
                cases.add(new Case("segment file named " + bad + state, clean, (h, r) ->
                {
                    Files.write(h.dir().resolve(bad), garbage(r, r.nextInt(200)));
                    return refused(bad, StorageErrorCode.CORRUPT_LOG);
                }));
            }
            cases.add(new Case("segment .log that is a directory" + state, clean, (h, r) ->
            {
                final String name = SegmentFiles.fileName(h.end() + 77) + SegmentFiles.LOG_SUFFIX;
                Files.createDirectory(h.dir().resolve(name));
                return refused(name, StorageErrorCode.CORRUPT_LOG);
            }));
            cases.add(new Case("index file without its .log" + state, clean, (h, r) ->
            {
                Files.write(h.dir().resolve(SegmentFiles.fileName(h.end() + 999) + SegmentFiles.INDEX_SUFFIX),
                    garbage(r, 80));
                return new Repaired(h.end());
            }));
            cases.add(new Case("unrelated file in the log directory" + state, clean, (h, r) ->
            {
                Files.writeString(h.dir().resolve("notes.txt"), "not a segment");
                return new Repaired(h.end());
            }));
            cases.add(new Case("spare segment left over, garbage" + state, clean, (h, r) ->
            {
                Files.write(h.dir().resolve("next-9.log" + SegmentFiles.SPARE_SUFFIX), garbage(r, 5000));
                Files.write(h.dir().resolve("next-9.index" + SegmentFiles.SPARE_SUFFIX), garbage(r, 33));
                return new Repaired(h.end());
            }));
            cases.add(new Case("empty segment file at the log end" + state, clean, (h, r) ->
            {
                Files.write(h.dir().resolve(SegmentFiles.fileName(h.end()) + SegmentFiles.LOG_SUFFIX), new byte[0]);
                return new Repaired(h.end());
            }));
            cases.add(new Case("segment .log extended (sparse) to 3 GiB: the active one" + state, clean, (h, r) ->
            {
                CrashFiles.cut(h.file(h.active().log()), 3L << 30);
                return refused(h.active().log().getFileName().toString(), StorageErrorCode.CORRUPT_LOG);
            }));
            cases.add(new Case("segment .log extended (sparse) to 3 GiB: a sealed one" + state, clean, (h, r) ->
            {
                CrashFiles.cut(h.file(h.sealed().log()), 3L << 30);
                return refused(h.sealed().log().getFileName().toString(), StorageErrorCode.CORRUPT_LOG);
            }));
            cases.add(new Case("a sealed segment cut short" + state, clean, (h, r) ->
            {
                final CrashFiles.SegmentScan sealed = h.sealed();
                CrashFiles.cut(h.file(sealed.log()), sealed.batches().get(sealed.batches().size() / 2).position());
                return refused("missing", StorageErrorCode.CORRUPT_LOG);
            }));
            cases.add(new Case("a segment below the recovery point missing" + state, clean, (h, r) ->
            {
                Files.delete(h.file(h.sealed().log()));
                return refused("missing", StorageErrorCode.CORRUPT_LOG);
            }));
            cases.add(new Case("a sealed segment all garbage" + state, clean, (h, r) ->
            {
                final CrashFiles.SegmentScan sealed = h.sealed();
                Files.write(h.file(sealed.log()), garbage(r, (int)sealed.fileLength()));
                return new KeptDamaged(sealed.base(), h.end());
            }));

            // A batch header claiming an absurd length.
            for (final int absurd : new int[]{ Integer.MAX_VALUE, -1, Integer.MIN_VALUE, 1 << 30,
                RecordBatchDescriptor.HEADER_LENGTH + 1 })
            {
                cases.add(new Case("batch length " + absurd + " in a sealed segment below the recovery point" + state,
                    clean, (h, r) ->
                    {
                        final CrashFiles.SegmentScan sealed = h.sealed();
                        final CrashFiles.Batch victim = sealed.batches().get(sealed.batches().size() / 3);
                        CrashFiles.putInt(h.file(sealed.log()), victim.position(), absurd);
                        return new KeptDamaged(victim.base(), h.end());
                    }));
                if (!clean)
                {
                    cases.add(new Case("batch length " + absurd + " in the unflushed tail" + state, false, (h, r) ->
                    {
                        final CrashFiles.SegmentScan active = h.active();
                        final CrashFiles.Batch victim = active.batches().get(active.batches().size() / 2);
                        CrashFiles.putInt(h.file(active.log()), victim.position(), absurd);
                        return new Repaired(victim.base());
                    }));
                }
            }
        }
        cases.add(new Case("unflushed tail all garbage (crashed)", false, (h, r) ->
        {
            final CrashFiles.SegmentScan active = h.active();
            Files.write(h.file(active.log()), garbage(r, (int)active.fileLength()));
            return new Repaired(active.base());
        }));
        cases.add(new Case("stray empty segment file beyond the end (crashed)", false, (h, r) ->
        {
            Files.write(h.dir().resolve(SegmentFiles.fileName(h.end() + 500) + SegmentFiles.LOG_SUFFIX), new byte[0]);
            return new Repaired(h.end());
        }));
        cases.add(new Case("stray empty segment file beyond the end (clean)", true, (h, r) ->
        {
            Files.write(h.dir().resolve(SegmentFiles.fileName(h.end() + 500) + SegmentFiles.LOG_SUFFIX), new byte[0]);
            return refused("missing", StorageErrorCode.CORRUPT_LOG);
        }));
        cases.add(new Case("clean-shutdown marker, but a garbage tail after the last batch", true, (h, r) ->
        {
            final CrashFiles.SegmentScan active = h.active();
            CrashFiles.write(h.file(active.log()), active.dataEnd(), garbage(r, 1 + r.nextInt(9000)));
            return new Repaired(h.end());
        }));
        cases.add(new Case("counters file garbage", true, (h, r) ->
        {
            Files.write(h.dir().resolve(LogFiles.COUNTERS_FILE), garbage(r, r.nextInt(20000)));
            return new Repaired(h.end());
        }));
        cases.add(new Case("counters file is a non-empty directory", true, (h, r) ->
        {
            Files.delete(h.dir().resolve(LogFiles.COUNTERS_FILE));
            Files.createDirectories(h.dir().resolve(LogFiles.COUNTERS_FILE).resolve("x"));
            return refused(LogFiles.COUNTERS_FILE, StorageErrorCode.IO_ERROR);
        }));

        // Directories that are not logs.
        cases.add(new Case("log.meta garbage", true, (h, r) ->
        {
            Files.write(h.dir().resolve(LogFiles.META_FILE), garbage(r, 20));
            return refused(LogFiles.META_FILE, StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case("log.meta empty", true, (h, r) ->
        {
            Files.write(h.dir().resolve(LogFiles.META_FILE), new byte[0]);
            return refused(LogFiles.META_FILE, StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case("log.meta truncated", true, (h, r) ->
        {
            CrashFiles.cut(h.dir().resolve(LogFiles.META_FILE), 1 + r.nextInt(19));
            return refused(LogFiles.META_FILE, StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case("log.meta oversized", true, (h, r) ->
        {
            final Path meta = h.dir().resolve(LogFiles.META_FILE);
            CrashFiles.write(meta, Files.size(meta), garbage(r, 1 + r.nextInt(1000)));
            return refused(LogFiles.META_FILE, StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case("log.meta missing next to segments", true, (h, r) ->
        {
            Files.delete(h.dir().resolve(LogFiles.META_FILE));
            return refused(LogFiles.META_FILE, StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case("log.meta is a directory", true, (h, r) ->
        {
            Files.delete(h.dir().resolve(LogFiles.META_FILE));
            Files.createDirectory(h.dir().resolve(LogFiles.META_FILE));
            return refused(LogFiles.META_FILE, StorageErrorCode.IO_ERROR, StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case(".lock is a directory", true, (h, r) ->
        {
            Files.delete(h.dir().resolve(LogFiles.LOCK_FILE));
            Files.createDirectory(h.dir().resolve(LogFiles.LOCK_FILE));
            return refused(LogFiles.LOCK_FILE, StorageErrorCode.IO_ERROR);
        }));
        return cases;
    }

    /** Directories that are not logs at all (no healthy log to start from). */
    private List<Case> foreignCases()
    {
        final List<Case> cases = new ArrayList<>();
        cases.add(new Case("the log directory is a regular file", true, (h, r) ->
        {
            CrashSupport.deleteTree(h.dir());
            Files.write(h.dir(), garbage(r, 100));
            return refused(h.dir().getFileName().toString(), StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case("a directory of someone else's files", true, (h, r) ->
        {
            CrashSupport.deleteTree(h.dir());
            Files.createDirectories(h.dir().resolve("sub"));
            Files.write(h.dir().resolve("data.bin"), garbage(r, 100));
            return refused("not a Tidemark log directory", StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case("a directory of segment-like files but no log.meta", true, (h, r) ->
        {
            CrashSupport.deleteTree(h.dir());
            Files.createDirectories(h.dir());
            Files.write(h.dir().resolve(SegmentFiles.fileName(0) + SegmentFiles.LOG_SUFFIX), garbage(r, 4096));
            return refused(LogFiles.META_FILE, StorageErrorCode.NOT_A_LOG_DIRECTORY);
        }));
        cases.add(new Case("a log directory under a regular file", true, (h, r) ->
        {
            CrashSupport.deleteTree(h.dir());
            Files.write(h.dir(), garbage(r, 10));
            return new Refused(EnumSet.of(StorageErrorCode.IO_ERROR, StorageErrorCode.NOT_A_LOG_DIRECTORY),
                h.dir().getFileName().toString());
        }, "log"));
        return cases;
    }

    @Test
    void badFilesAreRepairedOrRefusedTyped() throws Exception
    {
        final long seed = CrashSupport.seed();
        final Random random = new Random(seed);
        final int rounds = CrashSupport.scale(1, 20);
        final CrashSupport.Summary summary = new CrashSupport.Summary("badfiles",
            "runs", "repaired", "kept_damaged", "refused_typed", "wrong_outcome", "lost", "corrupt_served",
            "unchecked");
        final long startNs = System.nanoTime();
        final Healthy clean = healthy("clean", true);
        final Healthy crashed = healthy("crashed", false);
        final List<Case> cases = new ArrayList<>(cases());
        cases.addAll(foreignCases());
        int n = 0;
        for (int round = 0; round < rounds; round++)
        {
            for (final Case c : cases)
            {
                final Healthy template = c.clean() ? clean : crashed;
                final Path dir = root.resolve("case-" + n++);
                CrashFiles.copyDir(template.dir(), dir);
                final Healthy h = new Healthy(dir, template.clean(), template.end(), template.recoveryPoint(),
                    template.scans());
                final Expect expect = c.damage().apply(h, random);
                summary.inc("runs");
                check(h, expect, "seed " + seed + " case '" + c.name() + "'", summary, random,
                    null == c.openSubdir() ? dir : dir.resolve(c.openSubdir()));
                CrashSupport.deleteTree(dir);
            }
        }
        summary.print("cases=" + cases.size() + " seed=" + seed + " seconds=" +
            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs));
        assertEquals(0, summary.failureCount(), summary.failures());
    }

    private static void check(
        final Healthy h,
        final Expect expect,
        final String where,
        final CrashSupport.Summary summary,
        final Random random,
        final Path openAt)
    {
        final Log log;
        try
        {
            log = Log.open(CrashRecords.testContext(openAt));
        }
        catch (final StorageException ex)
        {
            if (expect instanceof Refused refused)
            {
                if (refused.codes().contains(ex.code()) && mentions(ex, refused.mention()))
                {
                    summary.inc("refused_typed");
                }
                else
                {
                    summary.fail("wrong_outcome", where + ": expected " + refused + ", got " + describe(ex));
                }
            }
            else
            {
                summary.fail("wrong_outcome", where + ": expected " + expect + ", got " + describe(ex));
            }
            return;
        }
        catch (final RuntimeException | Error ex)
        {
            summary.fail("unchecked", where + ": open threw " + describe(ex));
            return;
        }
        try
        {
            if (expect instanceof Refused)
            {
                summary.fail("wrong_outcome", where + ": expected " + expect + ", but the log opened: " +
                    log.recoveryReport());
                return;
            }
            if (expect instanceof Repaired repaired)
            {
                checkRepaired(log, repaired, where, summary, random);
            }
            else if (expect instanceof KeptDamaged kept)
            {
                checkKeptDamaged(log, h, kept, where, summary);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            summary.fail("unchecked", where + ": " + describe(ex));
        }
        finally
        {
            log.close();
        }
    }

    private static void checkRepaired(
        final Log log, final Repaired repaired, final String where, final CrashSupport.Summary summary,
        final Random random)
    {
        final CrashRecords.Verification v = CrashRecords.verify(log);
        if (!v.clean())
        {
            summary.fail("corrupt_served", where + ": " + v + "; " + log.recoveryReport());
            return;
        }
        if (log.logStartOffset() != 0 || v.next != repaired.end() || log.logEndOffset() != repaired.end())
        {
            summary.fail("lost", where + ": expected the records [0, " + repaired.end() + "), the log holds [" +
                log.logStartOffset() + ", " + log.logEndOffset() + ") and reads up to " + v.next + "; " +
                log.recoveryReport());
            return;
        }
        final long before = log.logEndOffset();
        CrashRecords.appendRandom(log, random);
        final CrashRecords.Verification after = CrashRecords.verify(log, before, Long.MAX_VALUE);
        if (!after.clean() || after.next != log.logEndOffset())
        {
            summary.fail("wrong_outcome", where + ": appends after the repair read back wrong: " + after);
            return;
        }
        summary.inc("repaired");
    }

    /**
     * The damaged batch (and, for a wholly garbage segment, the segment) must be unreadable with CORRUPT_BATCH;
     * every record read anywhere must be exactly what was appended; nothing before the damage may be lost.
     */
    private static void checkKeptDamaged(
        final Log log, final Healthy h, final KeptDamaged kept, final String where, final CrashSupport.Summary summary)
    {
        final CrashRecords.Verification before = CrashRecords.verify(log, 0, kept.damagedBase());
        if (!before.clean() || before.next != kept.damagedBase())
        {
            summary.fail("lost", where + ": records before the damage: " + before);
            return;
        }
        final CrashRecords.Verification damaged = CrashRecords.verify(log, kept.damagedBase(), kept.damagedBase() + 1);
        if (damaged.corruptServed > 0 || null != damaged.unchecked)
        {
            summary.fail("corrupt_served", where + ": reading the damaged batch: " + damaged);
            return;
        }
        if (damaged.served > 0 || null == damaged.error || damaged.error.code() != StorageErrorCode.CORRUPT_BATCH)
        {
            summary.fail("wrong_outcome", where + ": reading the damaged batch " + kept.damagedBase() +
                " must fail with CORRUPT_BATCH: " + damaged);
            return;
        }
        // Every record after the damage, read batch by batch: exactly as appended, or (for now) typed errors.
        for (final CrashFiles.SegmentScan scan : h.scans())
        {
            for (final CrashFiles.Batch batch : scan.batches())
            {
                if (batch.base() <= kept.damagedBase() || batch.base() >= log.logEndOffset())
                {
                    continue;
                }
                final CrashRecords.Verification v = CrashRecords.verify(log, batch.base(), batch.next());
                if (v.corruptServed > 0 || null != v.unchecked)
                {
                    summary.fail("corrupt_served", where + ": batch " + batch.base() + ": " + v);
                    return;
                }
                if (null != v.error && v.error.code() != StorageErrorCode.CORRUPT_BATCH)
                {
                    summary.fail("wrong_outcome", where + ": batch " + batch.base() + ": " + v);
                    return;
                }
            }
        }
        summary.inc("kept_damaged");
    }

    static boolean mentions(final Throwable ex, final String text)
    {
        for (Throwable t = ex; null != t; t = t.getCause())
        {
            if (String.valueOf(t.getMessage()).contains(text))
            {
                return true;
            }
        }
        return false;
    }

    private static String describe(final Throwable ex)
    {
        final StackTraceElement[] trace = ex.getStackTrace();
        return ex + (null != ex.getCause() ? " (cause " + ex.getCause() + ")" : "") +
            (trace.length > 0 ? " at " + trace[0] : "");
    }

    // ------------------------------------------------------------------------------------------------------------
    // Store bugs the table found (fixed), one reproduction each.
    // ------------------------------------------------------------------------------------------------------------

    @Test
    void anActiveSegmentIndexLargerThanTheConfigurationAllowsIsRebuilt() throws IOException
    {
        final Healthy h = healthy("config", true);
        final List<String> failures = new ArrayList<>();

        // An active segment with ~90 index entries, reopened with configurations that allow 32 and 18.
        final Path big = root.resolve("big-active");
        final Random random = new Random(8);
        final long bigEnd;
        try (Log log = Log.open(CrashRecords.testContext(big)))
        {
            while (log.segmentCount() < 2 || log.sizeInBytes() - CrashRecords.SEGMENT_BYTES < 95_000)
            {
                CrashRecords.appendRandom(log, random);
            }
            bigEnd = log.logEndOffset();
        }
        openAndRead(CrashRecords.testContext(big).segmentIndexBytes(4 * 8 * 12), bigEnd,
            "segment.index.bytes lowered to 384", failures);
        openAndRead(CrashRecords.testContext(big).segmentBytes(16 * 1024).maxMessageBytes(8 * 1024), bigEnd,
            "segment.bytes lowered to 16 KiB", failures);

        final long[] lengths = { 1 << 20, 3L << 30 };
        for (final long length : lengths)
        {
            final Path dir = root.resolve("oversized-" + length);
            CrashFiles.copyDir(h.dir(), dir);
            CrashFiles.cut(dir.resolve(h.active().offsetIndex().getFileName()), length);
            openAndRead(CrashRecords.testContext(dir), h.end(), "active .index extended to " + length, failures);
        }
        final Path appended = root.resolve("oversized-garbage");
        CrashFiles.copyDir(h.dir(), appended);
        final Path offsetIndex = appended.resolve(h.active().offsetIndex().getFileName());
        CrashFiles.write(offsetIndex, Files.size(offsetIndex), garbage(new Random(3), 64 * 1024));
        openAndRead(CrashRecords.testContext(appended), h.end(), "active .index with 64 KiB garbage appended",
            failures);
        final Path time = root.resolve("oversized-timeindex");
        CrashFiles.copyDir(h.dir(), time);
        CrashFiles.cut(time.resolve(h.active().timeIndex().getFileName()), 3L << 30);
        openAndRead(CrashRecords.testContext(time), h.end(), "active .timeindex extended to 3 GiB", failures);
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    private static void openAndRead(
        final LogContext ctx, final long end, final String what, final List<String> failures)
    {
        try (Log log = Log.open(ctx))
        {
            final CrashRecords.Verification v = CrashRecords.verify(log);
            if (!v.clean() || v.next != end)
            {
                failures.add(what + ": " + v);
            }
        }
        catch (final RuntimeException | OutOfMemoryError ex)
        {
            failures.add(what + ": " + describe(ex));
        }
    }

    @Test
    void anActiveSegmentCutShortBelowTheRecoveryPointIsClampedAndReportedNeverClaimed() throws IOException
    {
        // The flushed records after the cut are gone: the log must not claim them (a replica that did would tell its
        // leader it holds them), so it opens where its data ends, with the loss as a typed finding.
        final Healthy h = healthy("cut-active", true);
        final CrashFiles.SegmentScan active = h.active();
        final CrashFiles.Batch middle = active.batches().get(active.batches().size() / 2);
        for (final int cut : new int[]{ middle.position(), middle.position() + middle.length() / 2 })
        {
            final Path dir = root.resolve("cut-" + cut);
            CrashFiles.copyDir(h.dir(), dir);
            CrashFiles.cut(dir.resolve(active.log().getFileName()), cut);
            try (Log log = Log.open(CrashRecords.testContext(dir)))
            {
                final RecoveryReport report = log.recoveryReport();
                assertEquals(middle.base(), log.logEndOffset(), "cut at " + cut + " of " + middle + ": " + report);
                assertTrue(log.recoveryPoint() <= middle.base(), "cut at " + cut + ": " + report);
                assertEquals(List.of(new RecoveryReport.Loss(RecoveryReport.LossKind.FLUSHED_TAIL, middle.base(),
                    h.end())), report.losses(), "cut at " + cut + ": " + report);
                assertTrue(CrashRecords.verify(log, active.base(), middle.base()).clean());
            }
        }
    }

    @Test
    void anAbsurdBatchLengthBelowTheRecoveryPointHidesNothingElse() throws IOException
    {
        final Healthy h = healthy("absurd", true);
        final List<String> failures = new ArrayList<>();
        for (final boolean last : new boolean[]{ false, true })
        {
            final CrashFiles.SegmentScan scan = last ? h.active() : h.sealed();
            final CrashFiles.Batch victim = scan.batches().get(last ? scan.batches().size() - 1 : 3);
            final Path dir = root.resolve("absurd-" + last);
            CrashFiles.copyDir(h.dir(), dir);
            CrashFiles.putInt(dir.resolve(scan.log().getFileName()), victim.position(), Integer.MAX_VALUE);
            try (Log log = Log.open(CrashRecords.testContext(dir)))
            {
                // Damage with data after it keeps its offsets (unreadable); damage at the end of the flushed data is
                // where the data ends: the log end is clamped to it and the loss reported
                final long expectedEnd = last ? victim.base() : h.end();
                if (log.logEndOffset() != expectedEnd)
                {
                    failures.add("batch " + victim.base() + ": log end " + log.logEndOffset() + " instead of " +
                        expectedEnd);
                }
                final List<RecoveryReport.Loss> expectedLosses = last ? List.of(new RecoveryReport.Loss(
                    RecoveryReport.LossKind.FLUSHED_TAIL, victim.base(), h.end())) : List.of();
                if (!log.recoveryReport().losses().equals(expectedLosses))
                {
                    failures.add("batch " + victim.base() + ": losses " + log.recoveryReport().losses());
                }
                for (final CrashFiles.Batch batch : scan.batches())
                {
                    if (batch.base() > victim.base())
                    {
                        final CrashRecords.Verification v = CrashRecords.verify(log, batch.base(), batch.next());
                        if (!v.clean())
                        {
                            failures.add("intact batch " + batch.base() + " after damaged " + victim.base() + ": " + v);
                        }
                    }
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    @Test
    void anOversizedCheckpointOrMetaFileIsNotReadWhole() throws IOException
    {
        final Healthy h = healthy("oversized-small-files", true);
        final List<String> failures = new ArrayList<>();
        final Path checkpoint = root.resolve("oversized-checkpoint");
        CrashFiles.copyDir(h.dir(), checkpoint);
        CrashFiles.cut(checkpoint.resolve(LogFiles.CHECKPOINT_FILE), 3L << 30);
        openAndRead(CrashRecords.testContext(checkpoint), h.end(), "log.checkpoint extended to 3 GiB", failures);
        final Path meta = root.resolve("oversized-meta");
        CrashFiles.copyDir(h.dir(), meta);
        CrashFiles.cut(meta.resolve(LogFiles.META_FILE), 3L << 30);
        try (Log log = Log.open(CrashRecords.testContext(meta)))
        {
            failures.add("log.meta extended to 3 GiB: opened " + log);
        }
        catch (final StorageException ex)
        {
            if (ex.code() != StorageErrorCode.NOT_A_LOG_DIRECTORY)
            {
                failures.add("log.meta extended to 3 GiB: " + describe(ex));
            }
        }
        catch (final RuntimeException | OutOfMemoryError ex)
        {
            failures.add("log.meta extended to 3 GiB: " + describe(ex));
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    @Test
    void unreadableCheckpointAndMetaFilesAreNamedInTheError() throws IOException
    {
        final Healthy h = healthy("unreadable", true);
        final List<String> failures = new ArrayList<>();
        for (final String name : new String[]{ LogFiles.CHECKPOINT_FILE, LogFiles.META_FILE })
        {
            final Path dir = root.resolve("unreadable-" + name.length());
            CrashFiles.copyDir(h.dir(), dir);
            Files.delete(dir.resolve(name));
            Files.createDirectory(dir.resolve(name));
            try (Log log = Log.open(CrashRecords.testContext(dir)))
            {
                failures.add(name + " is a directory, yet the log opened: " + log);
            }
            catch (final StorageException ex)
            {
                if (!mentions(ex, name) || ex.getMessage().contains("lock"))
                {
                    failures.add(name + " is a directory: the error does not name it (or blames the lock): " +
                        describe(ex));
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }
}
