package io.tidemark.store;

import io.tidemark.store.file.SpaceReservation;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The log agent's preparation of one active segment ahead of its writer: reserve blocks (through the segment's
 * reservation step, {@link SegmentReservation#tryReserveStep}), pre-fault pages of the segment's mapping, and keep a
 * chunk of
 * each index file reserved past its entries, so that appends in steady state neither fault nor risk SIGBUS and the
 * writer's per-batch index check is a read. Pre-faulting is only ever an optimization: skipping it is correct.
 * <p>
 * Threads: only the log agent prepares. {@link #lock} guards the pre-faulting state ({@code touchedPosition}, the
 * writer's rate estimate, whether a refill is under way, the retry times after a full disk), which only the agent reads and writes: the writer
 * never takes it. A pass holds it, touches only pages below the reserved position (so a touch never meets a hole of
 * a full disk: no SIGBUS) and below the capacity, and stops after {@link #PRETOUCH_PAGES_PER_CALL} pages or
 * {@link #PASS_BUDGET_NS}. Everything that shortens or unmaps the segment's file takes this lock first
 * ({@link #holdOff}), then the reservation's lock: no touch ever lands past the end of the file. The segment
 * owns the mapping; this class borrows it and holds no pointer back to the segment (the agent's call passes it).
 */
final class SegmentPrefaulter
{
    /** Most pages one pass of pre-faulting touches (16 MiB). */
    static final int PRETOUCH_PAGES_PER_CALL = 4096;
    /** Longest pass of pre-faulting and reservation before the agent returns to its other duties. */
    static final long PASS_BUDGET_NS = 2_000_000;
    /** How far ahead the agent keeps, in time: the bytes the writer wrote in this long, at its recent rate. */
    static final long LEAD_NS = 250_000_000;
    /** Most the distance grows past {@code pretouch.bytes} for a fast writer. */
    static final int LEAD_FACTOR = 4;
    /** Least time between two samples of the writer's rate. */
    private static final long RATE_SAMPLE_NS = 10_000_000;
    private static final int RESERVE_CHUNKS_PER_CALL = 16;
    /** The agent refills once the writer has used this part of the distance ahead (a quarter). */
    static final int REFILL_PARTS = 4;
    private static final long NO_TIME = Long.MIN_VALUE;

    private final UnsafeBuffer buffer;
    private final int capacity;
    private final ReentrantLock lock = new ReentrantLock();
    private int touchedPosition;
    private boolean refilling;
    private int rateSamplePosition = -1;
    private long rateSampleNs;
    private long writerBytesPerSecond;
    private long reserveFailedAtMs = NO_TIME;
    private long indexReserveFailedAtMs = NO_TIME;

    /**
     * @param buffer          the segment's mapping (borrowed).
     * @param capacity        its length.
     * @param touchedPosition pages below it are already faulted in (by the writer's data or an earlier owner).
     */
    SegmentPrefaulter(final UnsafeBuffer buffer, final int capacity, final int touchedPosition)
    {
        this.buffer = buffer;
        this.capacity = capacity;
        this.touchedPosition = touchedPosition;
    }

    /** Take the pre-faulting lock: no pass is inside the mapping until {@link #resume}. Reentrant. */
    void holdOff()
    {
        lock.lock();
    }

    /** Release {@link #holdOff}. */
    void resume()
    {
        lock.unlock();
    }

    /** Pre-fault the first {@code target} bytes of a new spare segment, whose blocks the caller reserved. */
    void touchFirst(final int target)
    {
        lock.lock();
        try
        {
            for (int i = 0, pages = pagesToTouch(0, target, Integer.MAX_VALUE); i < pages; i++)
            {
                buffer.compareAndSetInt(i * Segment.PAGE_SIZE, 0, 0);
            }
            touchedPosition = target;
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Log agent duty: keep a chunk of each index file reserved past its entries ({@link IndexFile#reserveAhead}),
     * and reserve blocks and pre-fault pages ahead of the writer, at most {@link #PRETOUCH_PAGES_PER_CALL} pages and
     * about {@link #PASS_BUDGET_NS} per call ({@link #prepareDistance} says how far; a pass starts once the writer
     * has used a {@link #REFILL_PARTS}th of that distance, or overtook the agent). A full disk is not the agent's
     * error: it stops trying for a while and the writer, reserving on its own path, gets STORAGE_SPACE. Any other
     * failure to reserve index blocks fails the duty cycle (the agent reports it).
     *
     * @param segment    the segment whose mapping this prefaulter borrows.
     * @param aheadBytes {@code pretouch.bytes}: 0 turns preparation off.
     * @param nowMs      the log's clock, for the retry delays after a full disk.
     * @return work done (0 when nothing was needed).
     */
    int prepareAhead(final Segment segment, final int aheadBytes, final long nowMs)
    {
        if (aheadBytes <= 0 || segment.isSealed() || !lock.tryLock())
        {
            return 0;
        }
        try
        {
            if (segment.isSealed() || segment.isClosed())
            {
                return 0;
            }
            final SegmentReservation reservation = segment.reservation();
            final long startNs = System.nanoTime();
            int work = reserveIndexesAhead(segment, nowMs);
            final int writerPosition = segment.size();
            final long distance = prepareDistance(aheadBytes, writerPosition, startNs);
            final int target = (int)Math.min(capacity, (long)writerPosition + distance);
            if (!refilling && target < capacity &&
                touchedPosition - (long)writerPosition > distance - distance / REFILL_PARTS)
            {
                // Far enough ahead: refill in steps of a part of the distance, so that a writer moving a page at a
                // time does not bring the agent out of its idle backoff for every page it passes.
                return work;
            }
            refilling = true;
            for (int i = 0; i < RESERVE_CHUNKS_PER_CALL && reservation.reservedPosition() < target &&
                (reserveFailedAtMs == NO_TIME || nowMs - reserveFailedAtMs > 100) &&
                System.nanoTime() - startNs < PASS_BUDGET_NS; i++)
            {
                try
                {
                    if (!reservation.tryReserveStep(target))
                    {
                        break; // the writer is reserving for itself
                    }
                    reserveFailedAtMs = NO_TIME;
                    work++;
                }
                catch (final IOException ex)
                {
                    reserveFailedAtMs = nowMs; // the writer meets the error on its own path, typed
                }
            }
            // Never behind the writer: the pages below its position it has faulted in itself.
            final long firstPage = Segment.align(Math.max(touchedPosition, segment.size()), Segment.PAGE_SIZE);
            // below the reservation: no touch meets a hole
            final int limit = Math.min(reservation.reservedPosition(), target);
            final int pages = pagesToTouch(firstPage, limit, PRETOUCH_PAGES_PER_CALL);
            int touched = 0;
            while (touched < pages)
            {
                for (final int end = Math.min(pages, touched + 16); touched < end; touched++)
                {
                    // A write access: maps the page writable, changes nothing.
                    buffer.compareAndSetInt((int)(firstPage + (long)touched * Segment.PAGE_SIZE), 0, 0);
                }
                if (System.nanoTime() - startNs >= PASS_BUDGET_NS)
                {
                    break;
                }
            }
            work += touched;
            touchedPosition = (int)Math.max(touchedPosition,
                Math.min(firstPage + (long)touched * Segment.PAGE_SIZE, limit));
            refilling = touchedPosition < target; // a pass cut short by its budget goes on at the next call
            return work;
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Under {@link #lock}: how far ahead of the writer to prepare. At least {@code aheadBytes}
     * ({@code pretouch.bytes}); for a writer that writes more than that in {@link #LEAD_NS}, what it wrote in that
     * time at its recent rate, up to {@link #LEAD_FACTOR} times {@code aheadBytes}, so that the agent stays ahead
     * through a scheduling delay of that length. The rate is sampled at most every 10 ms; it rises at once and
     * decays by halves, so a burst extends the distance at once and an idle log returns to {@code aheadBytes}.
     */
    private long prepareDistance(final int aheadBytes, final int writerPosition, final long nowNs)
    {
        if (rateSamplePosition < 0 || writerPosition < rateSamplePosition)
        {
            rateSamplePosition = writerPosition; // first pass, or a truncation: start over
            rateSampleNs = nowNs;
        }
        else if (nowNs - rateSampleNs >= RATE_SAMPLE_NS)
        {
            final long rate = (long)(writerPosition - rateSamplePosition) * 1_000_000_000L / (nowNs - rateSampleNs);
            writerBytesPerSecond = rate >= writerBytesPerSecond ? rate : (writerBytesPerSecond + rate) / 2;
            rateSamplePosition = writerPosition;
            rateSampleNs = nowNs;
        }
        return leadDistance(aheadBytes, writerBytesPerSecond);
    }

    /**
     * @param aheadBytes      {@code pretouch.bytes}, positive.
     * @param bytesPerSecond  the writer's recent rate.
     * @return the distance to keep ahead: the bytes written in {@link #LEAD_NS} at that rate, between
     *         {@code aheadBytes} and {@link #LEAD_FACTOR} times it (long arithmetic: no overflow).
     */
    static long leadDistance(final int aheadBytes, final long bytesPerSecond)
    {
        final long lead = bytesPerSecond / 1000 * (LEAD_NS / 1_000_000);
        return Math.max(aheadBytes, Math.min((long)aheadBytes * LEAD_FACTOR, lead));
    }

    /**
     * @param firstPage the page-aligned position of the first page to touch (it may lie past the int range).
     * @param limit     no byte at or past this position is touched.
     * @param maxPages  most pages to touch.
     * @return how many pages from {@code firstPage} on have their first 4 bytes below {@code limit}, at most
     *         {@code maxPages}.
     */
    static int pagesToTouch(final long firstPage, final int limit, final int maxPages)
    {
        final long room = (long)limit - 4 - firstPage;
        return room < 0 ? 0 : (int)Math.min(maxPages, room / Segment.PAGE_SIZE + 1);
    }

    /** @return the position up to which pages have been pre-faulted. */
    int touchedPosition()
    {
        lock.lock();
        try
        {
            return touchedPosition;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** Under {@link #lock}: keep {@link IndexFile#RESERVE_CHUNK} reserved past each index's entries. */
    private int reserveIndexesAhead(final Segment segment, final long nowMs)
    {
        if (indexReserveFailedAtMs != NO_TIME && nowMs - indexReserveFailedAtMs <= 100)
        {
            return 0;
        }
        IndexFile reserving = segment.offsetIndex().file();
        try
        {
            int work = reserving.reserveAhead(IndexFile.RESERVE_CHUNK);
            reserving = segment.timeIndex().file();
            work += reserving.reserveAhead(IndexFile.RESERVE_CHUNK);
            indexReserveFailedAtMs = NO_TIME;
            return work;
        }
        catch (final IOException ex)
        {
            indexReserveFailedAtMs = nowMs;
            if (SpaceReservation.isOutOfSpace(ex, reserving.path()))
            {
                return 0; // the writer meets it on its own path, typed
            }
            throw new UncheckedIOException("failed to reserve " + reserving.path(), ex);
        }
    }
}
