package io.tidemark.bench.multiprocess;

import io.tidemark.replication.Acks;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.TimeUnit;

/**
 * One record at a time, {@code linger.ms=0}, acks=all, one partition: the bench's thread sends a record, waits for
 * its acknowledgement, and sends the next; each round trip (send call to acknowledgement) goes into a histogram. This
 * is the latency an application sees that needs each record replicated before it goes on.
 * <p>
 * One use: build, {@link #run}, discard.
 */
final class RoundTripPhase
{
    private final LoadTarget target;
    private final MultiProcessPlan plan;
    private final String topic;
    private final int tag;

    RoundTripPhase(final LoadTarget target, final MultiProcessPlan plan, final String topic, final int tag)
    {
        this.target = target;
        this.plan = plan;
        this.topic = topic;
        this.tag = tag;
    }

    /**
     * Send one at a time for the warm-up and the window.
     *
     * @param watch watches the cluster meanwhile.
     * @param run   the round, for the result.
     * @return the measures.
     */
    CellResult run(final ClusterWatch watch, final int run)
    {
        final CpuMeter cpu = new CpuMeter(target.servers());
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        final SendErrors errors = new SendErrors();
        final UnsafeBuffer value = RecordValues.filled(plan.recordSize());
        watch.begin();
        final LoadProducer producer = target.producer(topic, new ProducerSettings(Acks.ALL, plan.batchSize(), 0,
            plan.bufferMemory(), true));
        long sequence = 0;
        long inWindow = 0;
        String failure = null;
        CpuMeter.Usage usage = CpuMeter.Usage.none();
        try
        {
            final long windowStart = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(plan.warmupMs());
            final long windowEnd = windowStart + TimeUnit.MILLISECONDS.toNanos(plan.roundTripMs());
            long nextCheck = 0;
            boolean measuring = false;
            while (true)
            {
                final long begin = System.nanoTime();
                if (begin - windowEnd >= 0)
                {
                    break;
                }
                if (!measuring && begin - windowStart >= 0)
                {
                    measuring = true;
                    cpu.begin();
                }
                value.putLong(0, RecordValues.id(tag, 0, sequence++), RecordValues.ORDER);
                try
                {
                    producer.sendAndWait(value, plan.recordSize());
                    if (measuring)
                    {
                        histogram.recordValue(Math.min(histogram.getHighestTrackableValue(),
                            System.nanoTime() - begin));
                        inWindow++;
                    }
                }
                catch (final RuntimeException ex)
                {
                    errors.add(ex.getClass().getSimpleName(), String.valueOf(ex.getMessage()));
                }
                if (begin - nextCheck >= 0)
                {
                    nextCheck = begin + TimeUnit.SECONDS.toNanos(1);
                    watch.sampleNow(target.name() + " one-at-a-time round trips");
                }
            }
            usage = measuring ? cpu.end() : usage;
        }
        catch (final RuntimeException ex)
        {
            failure = ex.toString();
        }
        finally
        {
            producer.close(10_000);
        }
        return new CellResult(target.name(), CellResult.ROUND_TRIP, Acks.ALL, 1, run,
            inWindow / (plan.roundTripMs() / 1_000.0), inWindow, histogram, usage, 0, sequence, errors.total(),
            errors.byCode(), errors.first(), 0, null, failure, watch.end());
    }
}
