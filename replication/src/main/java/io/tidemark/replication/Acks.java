package io.tidemark.replication;

/**
 * When a produce request is acknowledged (see the reference, docs/replication.md):
 * <ul>
 *   <li>{@link #NONE} (acks=0): never answered; the leader still appends.</li>
 *   <li>{@link #LEADER} (acks=1): once the leader appended it.</li>
 *   <li>{@code replicas(N)} (acks=N, 2..RF): once N members of the current ISR, leader included, hold it;
 *       rejected up front while the ISR has fewer than N members. <b>Across an election it guarantees nothing more
 *       than acks=1</b>: the new leader is the first live ISR member in assignment order, not the one that holds
 *       the most, so a single leader failure can lose a record acknowledged with acks=N when the elected replica was
 *       not one of its holders (it is not committed until the high watermark passes it). Only records below the
 *       high watermark, and so every acks=all acknowledgement, survive elections.</li>
 *   <li>{@link #ALL} (acks=all, -1): once the high watermark passed it (every ISR member holds it); rejected up
 *       front while the ISR is smaller than {@code min.insync.replicas}.</li>
 * </ul>
 */
public final class Acks
{
    /** acks=0. */
    public static final int NONE = 0;
    /** acks=1. */
    public static final int LEADER = 1;
    /** acks=all. */
    public static final int ALL = -1;

    private Acks()
    {
    }

    /**
     * acks=N: acknowledged once N members of the current ISR (leader included) hold the record. Lower latency than
     * acks=all when the ISR is larger than N, but across an election it guarantees nothing beyond {@link #LEADER}:
     * the elected replica may not be one of the N (see the class comment). Use {@link #ALL} with
     * {@code min.insync.replicas} for records that must survive failures.
     *
     * @param replicas N, at least 2.
     * @return the acks value meaning "N in-sync replicas".
     */
    public static int replicas(final int replicas)
    {
        if (replicas < 2)
        {
            throw new IllegalArgumentException("acks=N needs N >= 2 (use LEADER for 1): " + replicas);
        }
        return replicas;
    }

    /**
     * @param acks an acks value.
     * @return its name as the reference writes it.
     */
    public static String describe(final int acks)
    {
        return acks == ALL ? "all" : Integer.toString(acks);
    }

    static void validate(final int acks, final int replicationFactor)
    {
        if (acks < ALL || acks > replicationFactor)
        {
            throw new IllegalArgumentException("acks must be -1 (all), 0, 1 or 2.." + replicationFactor + ": " + acks);
        }
    }
}
