package io.tidemark.aeron;

import io.aeron.Aeron;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BackoffIdleStrategy;

import java.nio.file.Path;

/**
 * An Aeron client with its media driver: an embedded driver (the default: one driver thread inside this JVM, its
 * files under a directory of its own) or an external driver already running on the machine (by its directory).
 * Closing closes the client, then the embedded driver and its files.
 */
public final class AeronMedia implements AutoCloseable
{
    private final MediaDriver driver;
    private final Aeron aeron;

    private AeronMedia(final MediaDriver driver, final Aeron aeron)
    {
        this.driver = driver;
        this.aeron = aeron;
    }

    /**
     * Launch an embedded media driver in {@code aeronDir} (created; a stale driver's files there are removed) with
     * one shared driver thread that backs off when idle, so that it leaves the cores to the replication agents,
     * and connect a client to it.
     *
     * @param aeronDir the driver's directory; on Linux {@code /dev/shm/...} keeps its buffers in memory.
     * @return the client and driver.
     */
    public static AeronMedia launchEmbedded(final Path aeronDir)
    {
        final MediaDriver driver = MediaDriver.launch(new MediaDriver.Context()
            .aeronDirectoryName(aeronDir.toAbsolutePath().toString())
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .termBufferSparseFile(true)
            .threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(new BackoffIdleStrategy(100, 10, 1_000, 100_000)));
        try
        {
            return new AeronMedia(driver, Aeron.connect(new Aeron.Context()
                .aeronDirectoryName(driver.aeronDirectoryName())));
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(driver);
            throw ex;
        }
    }

    /**
     * Connect to a media driver that runs outside this JVM.
     *
     * @param aeronDirectoryName the external driver's directory.
     * @return the client (closing it leaves the driver running).
     */
    public static AeronMedia connectExternal(final String aeronDirectoryName)
    {
        return new AeronMedia(null, Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDirectoryName)));
    }

    /** @return the Aeron client. */
    public Aeron aeron()
    {
        return aeron;
    }

    /** @return whether the driver is embedded in this JVM. */
    public boolean embedded()
    {
        return null != driver;
    }

    @Override
    public void close()
    {
        CloseHelper.closeAll(aeron, driver);
    }
}
