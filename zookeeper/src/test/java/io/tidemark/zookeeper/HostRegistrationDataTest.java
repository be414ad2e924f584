package io.tidemark.zookeeper;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A host's registration data ({@link ZooKeeperHostLiveness.Registration}) as written and as read back: the forms of
 * earlier builds still read, and data that is damaged or forged holds no registration.
 */
class HostRegistrationDataTest
{
    private static ZooKeeperHostLiveness.Registration parse(final String text)
    {
        return ZooKeeperHostLiveness.Registration.parse(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aRegistrationWithItsLivenessPortReadsBack()
    {
        final ZooKeeperHostLiveness.Registration written =
            new ZooKeeperHostLiveness.Registration(7, "127.0.0.1:40100", "tok3n", 45_001);
        assertEquals(written, ZooKeeperHostLiveness.Registration.parse(written.encode()));
        assertEquals("7 127.0.0.1:40100 tok3n 45001", new String(written.encode(), StandardCharsets.UTF_8));
    }

    @Test
    void earlierBuildsFormsReadWithoutALivenessPort()
    {
        assertEquals(new ZooKeeperHostLiveness.Registration(3, "h:1", "t", 0), parse("3 h:1 t"));
        assertEquals(new ZooKeeperHostLiveness.Registration(3, "h:1", null, 0), parse("3 h:1"));
        assertEquals(new ZooKeeperHostLiveness.Registration(3, "h:1", "t"), parse("3 h:1 t\n"));
    }

    @Test
    void damagedOrForgedDataHoldsNoRegistration()
    {
        assertNull(ZooKeeperHostLiveness.Registration.parse(null));
        assertNull(parse(""));
        assertNull(parse("host 2"), "the plain overload's data");
        assertNull(parse("3"));
        assertNull(parse("3 h:1 t 45001 extra"), "five words");
        assertNull(parse("3 h:1 t 0"), "port 0");
        assertNull(parse("3 h:1 t 65536"), "port out of range");
        assertNull(parse("3 h:1 t -5"), "negative port");
        assertNull(parse("3 h:1 t port"), "a port that is not a number");
        assertNull(parse("x h:1 t 45001"), "an incarnation that is not a number");
        assertNull(parse("3 h:1 t 99999999999999999999"), "a port past a long");
        assertNull(ZooKeeperHostLiveness.Registration.parse(
            new byte[ZooKeeperHostLiveness.Registration.MAX_LENGTH + 1]), "oversized");
    }

    @Test
    void aLivenessPortNeedsATokenAndARange()
    {
        assertThrows(IllegalArgumentException.class,
            () -> new ZooKeeperHostLiveness.Registration(1, "h:1", null, 45_001).encode());
        assertThrows(IllegalArgumentException.class,
            () -> new ZooKeeperHostLiveness.Registration(1, "h:1", "t", 70_000).encode());
    }
}
