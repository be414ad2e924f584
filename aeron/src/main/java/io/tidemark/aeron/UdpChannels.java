package io.tidemark.aeron;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Aeron UDP channels sized for the path they run on. Aeron's default MTU (1,408 bytes) suits an Ethernet path of
 * 1,500 bytes with room for tunnels; on loopback (65,536 bytes) or jumbo frames (9,000) it splits every message into
 * many datagrams, and each datagram costs the sending and the receiving media driver a system call and a duty cycle
 * of their own: the CPU of a media driver grows with datagrams, not bytes. So a publication takes the MTU of the
 * interface its destination is reached by (a route lookup: a UDP socket connected to the destination, which sends
 * nothing), less the IP and UDP headers, and a subscription takes a receiver window and socket receive buffer of 32
 * such datagrams (at least Aeron's 128 KiB, at most 2 MiB and the system's {@code net.core.rmem_max}), so that large
 * datagrams do not overrun it.
 * <p>
 * On an interface of 1,500 bytes or less Aeron's defaults are kept. A configured MTU ({@code transport.mtu}) replaces
 * the measured one, e.g. where the path between hosts has a smaller MTU than the hosts' interfaces.
 */
public final class UdpChannels
{
    /** Aeron's default MTU: kept on paths of 1,500 bytes and less. */
    public static final int DEFAULT_MTU = 1408;
    /** The largest MTU Aeron takes: the largest UDP payload. */
    public static final int MAX_MTU = 65504;
    /** Configured MTU meaning "from the path". */
    public static final int AUTO = 0;

    static final int MIN_WINDOW = 128 * 1024;
    static final int MAX_WINDOW = 2 * 1024 * 1024;
    private static final int FRAME_ALIGNMENT = 32;
    private static final int ETHERNET_MTU = 1500;

    private UdpChannels()
    {
    }

    /**
     * @param endpoint {@code address:port} of the destination.
     * @param mtu      the MTU to use, or {@link #AUTO} for the path's.
     * @return the channel of a publication to {@code endpoint}.
     */
    public static String publication(final String endpoint, final int mtu)
    {
        final int length = mtu > 0 ? mtu : pathMtu(endpoint);
        return "aeron:udp?endpoint=" + endpoint + (length == DEFAULT_MTU ? "" : "|mtu=" + length);
    }

    /**
     * @param endpoint {@code address:port} this process receives on.
     * @param mtu      the MTU senders use, or {@link #AUTO} for that of the path to {@code endpoint}.
     * @return the channel of a subscription on {@code endpoint}.
     */
    public static String subscription(final String endpoint, final int mtu)
    {
        final int length = mtu > 0 ? mtu : pathMtu(endpoint);
        final int window = receiverWindow(length, systemReceiveBufferMax());
        return "aeron:udp?endpoint=" + endpoint + (window <= MIN_WINDOW ? "" :
            "|rcv-wnd=" + window + "|so-rcvbuf=" + window);
    }

    /**
     * @param mtu    the MTU of the senders.
     * @param rmemMax the system's largest socket receive buffer ({@code net.core.rmem_max}), or 0 when unknown.
     * @return a receiver window of 32 datagrams, a power of two in [128 KiB, 2 MiB], at most {@code rmemMax}.
     */
    static int receiverWindow(final int mtu, final long rmemMax)
    {
        int window = MIN_WINDOW;
        while (window < 32L * mtu && window < MAX_WINDOW)
        {
            window <<= 1;
        }
        while (rmemMax > 0 && window > rmemMax && window > MIN_WINDOW)
        {
            window >>= 1;
        }
        return window;
    }

    /**
     * @param interfaceMtu the MTU of the interface (-1 when unknown).
     * @param ipv6         whether the path is IPv6 (a 40-byte IP header instead of 20).
     * @return the Aeron MTU for it: the largest UDP payload, a multiple of 32, Aeron's default on Ethernet and below.
     */
    static int mtuFor(final int interfaceMtu, final boolean ipv6)
    {
        if (interfaceMtu <= 0)
        {
            return DEFAULT_MTU;
        }
        final int payload = (interfaceMtu - (ipv6 ? 48 : 28)) & -FRAME_ALIGNMENT;
        if (interfaceMtu <= ETHERNET_MTU)
        {
            return Math.max(FRAME_ALIGNMENT * 8, Math.min(DEFAULT_MTU, payload));
        }
        return Math.min(MAX_MTU, payload);
    }

    /**
     * @param endpoint {@code address:port}.
     * @return the Aeron MTU of the path to it (see the class comment); Aeron's default when it cannot be found (a
     *         wildcard or unresolvable address).
     */
    public static int pathMtu(final String endpoint)
    {
        final int colon = endpoint.lastIndexOf(':');
        if (colon <= 0)
        {
            return DEFAULT_MTU;
        }
        String host = endpoint.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]"))
        {
            host = host.substring(1, host.length() - 1);
        }
        try
        {
            final InetAddress address = InetAddress.getByName(host);
            if (address.isAnyLocalAddress())
            {
                return DEFAULT_MTU;
            }
            try (DatagramSocket socket = new DatagramSocket())
            {
                socket.connect(new InetSocketAddress(address, 9)); // a route lookup: nothing is sent
                final InetAddress source = socket.getLocalAddress();
                final NetworkInterface nic = null == source ? null : NetworkInterface.getByInetAddress(source);
                return mtuFor(null == nic ? -1 : nic.getMTU(), address instanceof Inet6Address);
            }
        }
        catch (final IOException | UncheckedIOException | SecurityException ex)
        {
            return DEFAULT_MTU;
        }
    }

    /** @return {@code net.core.rmem_max} where the system has it (Linux), else 0. */
    static long systemReceiveBufferMax()
    {
        try
        {
            return Long.parseLong(Files.readString(Path.of("/proc/sys/net/core/rmem_max")).trim());
        }
        catch (final IOException | RuntimeException ex)
        {
            return 0;
        }
    }

    /**
     * @param channel an Aeron UDP channel, e.g. {@code aeron:udp?endpoint=10.0.0.1:40100|mtu=8960}.
     * @return its {@code address:port}, or null when it is not a UDP channel with an endpoint.
     */
    public static String endpointOf(final String channel)
    {
        final String prefix = "aeron:udp?";
        if (null == channel || !channel.startsWith(prefix))
        {
            return null;
        }
        for (final String param : channel.substring(prefix.length()).split("\\|"))
        {
            if (param.startsWith("endpoint="))
            {
                final String endpoint = param.substring("endpoint=".length());
                return endpoint.isEmpty() ? null : endpoint;
            }
        }
        return null;
    }
}
