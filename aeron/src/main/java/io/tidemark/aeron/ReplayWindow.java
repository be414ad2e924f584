package io.tidemark.aeron;

/**
 * Replay protection for one sender: the sequence numbers of its current epoch seen within the last
 * {@link #WIDTH}, as in IPsec's anti-replay window (RFC 4303, 3.4.3). A number seen before, or older than the
 * window, is refused; a new epoch (a restarted sender, checked by the caller against the registered one) starts a
 * new window. Call it only for a frame whose tag verified, so a forgery cannot move the window.
 * <p>
 * Not thread-safe: owned by the receiving subscription's poller.
 */
public final class ReplayWindow
{
    /** Sequence numbers kept below the highest. */
    public static final int WIDTH = 64;

    private long epoch = Long.MIN_VALUE;
    private long highest;
    private long seen;

    /**
     * @param senderEpoch the frame's sender epoch (already checked by the caller).
     * @param sequence    the frame's sequence number (positive).
     * @return whether the frame is new: accepted, and remembered.
     */
    public boolean accept(final long senderEpoch, final long sequence)
    {
        if (sequence <= 0)
        {
            return false;
        }
        if (senderEpoch != epoch)
        {
            epoch = senderEpoch;
            highest = sequence;
            seen = 1;
            return true;
        }
        if (sequence > highest)
        {
            final long shift = sequence - highest;
            seen = shift >= WIDTH ? 1 : (seen << shift) | 1;
            highest = sequence;
            return true;
        }
        final long age = highest - sequence;
        if (age >= WIDTH)
        {
            return false;
        }
        final long bit = 1L << age;
        if ((seen & bit) != 0)
        {
            return false;
        }
        seen |= bit;
        return true;
    }

    /** @return the epoch of the window, or {@link Long#MIN_VALUE} before the first frame. */
    public long epoch()
    {
        return epoch;
    }

    /** Forget everything (the sender is gone). */
    public void reset()
    {
        epoch = Long.MIN_VALUE;
        highest = 0;
        seen = 0;
    }
}
