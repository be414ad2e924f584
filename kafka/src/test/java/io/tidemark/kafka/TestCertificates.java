package io.tidemark.kafka;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Key stores made for a test by the JDK's keytool (no private key is checked in): a listener's key store holding a
 * self-signed EC certificate for localhost and 127.0.0.1, a trust store with that certificate for clients, and a
 * trust store with another certificate (one the listener's is not), plus a users file with mode 0600. Public, and
 * in the kafka module's test-jar, for the host module's tests of listeners in host processes.
 */
public final class TestCertificates
{
    /** The password of every store. */
    public static final String PASSWORD = "test-store-password";

    /** The listener's key store. */
    public final Path keystore;
    /** A trust store holding the listener's certificate. */
    public final Path truststore;
    /** A trust store holding another certificate only. */
    public final Path untrustedTruststore;
    /** The key store whose certificate {@link #untrustedTruststore} holds: a client's, for mutual TLS. */
    public final Path otherKeystore;

    private TestCertificates(final Path dir)
    {
        this.keystore = dir.resolve("listener.p12");
        this.truststore = dir.resolve("client-trust.p12");
        this.untrustedTruststore = dir.resolve("other-trust.p12");
        this.otherKeystore = dir.resolve("other.p12");
    }

    /** Generate the stores in {@code dir} (runs keytool five times). */
    public static TestCertificates generate(final Path dir) throws IOException, InterruptedException
    {
        final TestCertificates certificates = new TestCertificates(dir);
        final Path other = certificates.otherKeystore;
        keyPair(certificates.keystore, "listener");
        keyPair(other, "other");
        trust(certificates.keystore, "listener", certificates.truststore, dir.resolve("listener.crt"));
        trust(other, "other", certificates.untrustedTruststore, dir.resolve("other.crt"));
        return certificates;
    }

    private static void keyPair(final Path store, final String alias) throws IOException, InterruptedException
    {
        keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-sigalg",
            "SHA256withECDSA", "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2",
            "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD);
    }

    private static void trust(final Path keyStore, final String alias, final Path trustStore, final Path certificate)
        throws IOException, InterruptedException
    {
        keytool("-exportcert", "-alias", alias, "-keystore", keyStore.toString(), "-storepass", PASSWORD, "-rfc",
            "-file", certificate.toString());
        keytool("-importcert", "-noprompt", "-alias", alias, "-file", certificate.toString(), "-keystore",
            trustStore.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
    }

    private static void keytool(final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0)
        {
            process.destroyForcibly();
            throw new IOException("keytool " + command + " failed: " + output);
        }
    }

    /** Write a users file ({@code user=password} lines) with mode 0600. */
    public static Path users(final Path file, final Map<String, String> users) throws IOException
    {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        final StringBuilder text = new StringBuilder("# test users\n");
        users.forEach((user, password) -> text.append(user).append('=').append(password).append('\n'));
        Files.writeString(file, text.toString());
        return file;
    }

    /** @return a listener configuration serving SASL_SSL with these stores and users. */
    public KafkaContext saslSsl(final Path usersFile)
    {
        return new KafkaContext().listener("127.0.0.1:0").securityProtocol(
            org.apache.kafka.common.security.auth.SecurityProtocol.SASL_SSL).sslKeystore(keystore, PASSWORD)
            .saslUsersFile(usersFile);
    }

    /**
     * @return client properties for SASL_SSL: the mechanism, the JAAS line, and a trust store.
     */
    public static Properties client(final Properties props, final String mechanism, final String user,
        final String password, final Path trustStore)
    {
        props.put("security.protocol", "SASL_SSL");
        props.put("sasl.mechanism", mechanism);
        final String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule" :
            "org.apache.kafka.common.security.scram.ScramLoginModule";
        props.put("sasl.jaas.config", module + " required username=\"" + user + "\" password=\"" + password +
            "\";");
        props.put("ssl.truststore.location", trustStore.toString());
        props.put("ssl.truststore.password", PASSWORD);
        props.put("ssl.truststore.type", "PKCS12");
        return props;
    }
}
