package io.tidemark.host;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The host directory's token: made once, read back the same, and a damaged one replaced (never trusted). */
class HostDirTokenTest
{
    private static final System.Logger LOG = System.getLogger(HostDirTokenTest.class.getName());

    @Test
    void madeOnceAndReadBack(@TempDir final Path dir) throws Exception
    {
        final String token = HostDirToken.readOrCreate(dir, LOG);
        assertTrue(HostDirToken.isToken(token), token);
        assertEquals(token, HostDirToken.readOrCreate(dir, LOG), "the same token at the next start");
        assertEquals(token + "\n", Files.readString(dir.resolve(HostDirToken.FILE), StandardCharsets.US_ASCII));
        assertFalse(Files.exists(dir.resolve(HostDirToken.FILE + ".tmp")), "no temporary file left");
        assertNotEquals(token, HostDirToken.readOrCreate(Files.createDirectory(dir.resolve("other")), LOG),
            "another directory, another token");
    }

    @Test
    void aDamagedTokenIsReplaced(@TempDir final Path dir) throws Exception
    {
        final Path file = dir.resolve(HostDirToken.FILE);
        for (final byte[] damaged : new byte[][]{
            new byte[0],
            "0123456789abcdef".getBytes(StandardCharsets.US_ASCII), // torn
            "0123456789ABCDEF0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII), // not ours: upper case
            "0123456789abcdef0123456789abcdeg".getBytes(StandardCharsets.US_ASCII),
            new byte[]{ (byte)0xff, (byte)0xfe, 0, 1 }, // not text
        })
        {
            Files.write(file, damaged);
            final String token = HostDirToken.readOrCreate(dir, LOG);
            assertTrue(HostDirToken.isToken(token), token);
            assertEquals(token + "\n", Files.readString(file, StandardCharsets.US_ASCII), "written in its place");
        }
    }

    @Test
    void onlyExactTokensAreTokens()
    {
        assertTrue(HostDirToken.isToken("0123456789abcdef0123456789abcdef"));
        assertFalse(HostDirToken.isToken(null));
        assertFalse(HostDirToken.isToken(""));
        assertFalse(HostDirToken.isToken("0123456789abcdef0123456789abcdef0"));
        assertFalse(HostDirToken.isToken("0123456789abcdef 123456789abcdef"));
    }
}
