package io.tidemark.client.remote.protocol;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The parts of the gateway's messages both sides compute: the HELLO's reply address, the wire correlation. */
class GatewayMessagesTest
{
    @Test
    void aHelloStatesAUnicastAddressAndPortTheHostReadsBack() throws Exception
    {
        final UnsafeBuffer hello = new UnsafeBuffer(new byte[GatewayMessages.HELLO_LENGTH]);
        GatewayMessages.encodeHello(InetAddress.getByName("10.0.0.20"), 40_123, hello);
        assertEquals("10.0.0.20:40123", GatewayMessages.replyEndpoint(hello, 0, GatewayMessages.HELLO_LENGTH));
        GatewayMessages.encodeHello(InetAddress.getByName("::1"), 1, hello);
        assertEquals("[0:0:0:0:0:0:0:1]:1", GatewayMessages.replyEndpoint(hello, 0, GatewayMessages.HELLO_LENGTH));
    }

    @Test
    void aHelloNamingNoUnicastAddressOrPortIsRefused() throws Exception
    {
        final UnsafeBuffer hello = new UnsafeBuffer(new byte[GatewayMessages.HELLO_LENGTH + 1]);
        for (final String address : new String[]{ "224.0.0.1", "0.0.0.0", "169.254.1.1", "ff02::1" })
        {
            GatewayMessages.encodeHello(InetAddress.getByName(address), 9_000, hello);
            assertNull(GatewayMessages.replyEndpoint(hello, 0, GatewayMessages.HELLO_LENGTH), address);
        }
        GatewayMessages.encodeHello(InetAddress.getByName("10.0.0.20"), 0, hello);
        assertNull(GatewayMessages.replyEndpoint(hello, 0, GatewayMessages.HELLO_LENGTH), "port 0");
        GatewayMessages.encodeHello(InetAddress.getByName("10.0.0.20"), 9_000, hello);
        assertNull(GatewayMessages.replyEndpoint(hello, 0, GatewayMessages.HELLO_LENGTH + 1), "a longer payload");
        hello.putByte(GatewayMessages.HELLO_ADDRESS_OFFSET + 4, (byte)1);
        assertNull(GatewayMessages.replyEndpoint(hello, 0, GatewayMessages.HELLO_LENGTH), "bytes past an IPv4 address");
        hello.putByte(GatewayMessages.HELLO_ADDRESS_OFFSET + 4, (byte)0);
        hello.putByte(GatewayMessages.HELLO_FAMILY_OFFSET, (byte)5);
        assertNull(GatewayMessages.replyEndpoint(hello, 0, GatewayMessages.HELLO_LENGTH), "an unknown family");
    }

    @Test
    void theWireCorrelationCarriesTheSessionAndTheProducersId()
    {
        final long wire = GatewayMessages.wireCorrelation(32_767, 0xFFFF_FFFF_FFFFL);
        assertEquals(32_767, GatewayMessages.sessionOf(wire));
        assertEquals(0xFFFF_FFFF_FFFFL, GatewayMessages.correlationOf(wire));
        assertEquals(7, GatewayMessages.sessionOf(GatewayMessages.wireCorrelation(7, 42)));
        assertEquals(42, GatewayMessages.correlationOf(GatewayMessages.wireCorrelation(7, 42)));
    }
}
