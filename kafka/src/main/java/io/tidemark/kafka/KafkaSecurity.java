package io.tidemark.kafka;

import io.tidemark.store.ConfigException;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.UnrecoverableKeyException;
import java.util.Collections;

/**
 * What a listener's security protocol needs, loaded once when it starts: the TLS context (key store, optional trust
 * store for clients' certificates) and the SASL users. Every failure is a {@link ConfigException} naming the key at
 * fault (a missing key store, a wrong password, a key store without a private key, a users file open to others).
 * Immutable and thread-safe.
 */
final class KafkaSecurity
{
    private final KafkaContext ctx;
    private final SSLContext ssl;
    private final SaslUsers users;

    private KafkaSecurity(final KafkaContext ctx, final SSLContext ssl, final SaslUsers users)
    {
        this.ctx = ctx;
        this.ssl = ssl;
        this.users = users;
    }

    /**
     * @param ctx a validated listener configuration.
     * @throws ConfigException naming the key at fault.
     */
    static KafkaSecurity create(final KafkaContext ctx)
    {
        final SSLContext ssl = ctx.usesTls() ? sslContext(ctx) : null;
        final SaslUsers users = ctx.usesSasl() ? SaslUsers.load(ctx.saslUsersFile(), ctx.saslEnabledMechanisms()) :
            null;
        return new KafkaSecurity(ctx, ssl, users);
    }

    /** @return whether connections speak TLS. */
    boolean tls()
    {
        return null != ssl;
    }

    /** @return the SASL users, or null when the listener does not authenticate with SASL. */
    SaslUsers users()
    {
        return users;
    }

    /** @return a server-side engine for one connection. */
    SSLEngine newEngine(final String peerHost, final int peerPort)
    {
        final SSLEngine engine = ssl.createSSLEngine(peerHost, peerPort);
        engine.setUseClientMode(false);
        final SSLParameters parameters = engine.getSSLParameters();
        parameters.setProtocols(ctx.sslEnabledProtocols().toArray(new String[0]));
        switch (ctx.sslClientAuth())
        {
            case "required" -> parameters.setNeedClientAuth(true);
            case "requested" -> parameters.setWantClientAuth(true);
            default ->
            {
                parameters.setNeedClientAuth(false);
                parameters.setWantClientAuth(false);
            }
        }
        engine.setSSLParameters(parameters);
        return engine;
    }

    private static SSLContext sslContext(final KafkaContext ctx)
    {
        final KeyStore keys = load(ctx.sslKeystoreLocation(), ctx.sslKeystorePassword(),
            KafkaContext.SSL_KEYSTORE_LOCATION, KafkaContext.SSL_KEYSTORE_PASSWORD, "key store");
        try
        {
            boolean hasKey = false;
            for (final String alias : Collections.list(keys.aliases()))
            {
                hasKey |= keys.isKeyEntry(alias);
            }
            if (!hasKey)
            {
                throw new ConfigException(KafkaContext.SSL_KEYSTORE_LOCATION, "the key store " +
                    ctx.sslKeystoreLocation() + " has no private key");
            }
            final KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(
                KeyManagerFactory.getDefaultAlgorithm());
            try
            {
                keyManagers.init(keys, ctx.sslKeyPassword().toCharArray());
            }
            catch (final UnrecoverableKeyException ex)
            {
                throw new ConfigException(KafkaContext.SSL_KEY_PASSWORD, "cannot read the private key of " +
                    ctx.sslKeystoreLocation() + " with this password");
            }
            TrustManagerFactory trustManagers = null;
            if (null != ctx.sslTruststoreLocation())
            {
                final KeyStore trusted = load(ctx.sslTruststoreLocation(), ctx.sslTruststorePassword(),
                    KafkaContext.SSL_TRUSTSTORE_LOCATION, KafkaContext.SSL_TRUSTSTORE_PASSWORD, "trust store");
                trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                trustManagers.init(trusted);
            }
            final SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), null == trustManagers ? null :
                trustManagers.getTrustManagers(), null);
            final java.util.List<String> supported = java.util.Arrays.asList(
                context.getSupportedSSLParameters().getProtocols());
            for (final String protocol : ctx.sslEnabledProtocols())
            {
                if (!supported.contains(protocol))
                {
                    throw new ConfigException(KafkaContext.SSL_ENABLED_PROTOCOLS, protocol + " is not supported " +
                        "by this JVM (it supports " + supported + ")");
                }
            }
            return context;
        }
        catch (final GeneralSecurityException ex)
        {
            throw new ConfigException(KafkaContext.SSL_KEYSTORE_LOCATION, "cannot set up TLS with " +
                ctx.sslKeystoreLocation() + ": " + ex.getClass().getSimpleName() + ": " + ex.getMessage());
        }
    }

    private static KeyStore load(final Path file, final String password, final String fileKey,
        final String passwordKey, final String what)
    {
        if (!Files.isRegularFile(file))
        {
            throw new ConfigException(fileKey, "no " + what + " at " + file);
        }
        try
        {
            return KeyStore.getInstance(file.toFile(), password.toCharArray());
        }
        catch (final IOException ex)
        {
            if (ex.getCause() instanceof UnrecoverableKeyException)
            {
                throw new ConfigException(passwordKey, "wrong password for the " + what + " " + file);
            }
            throw new ConfigException(fileKey, "cannot read the " + what + " " + file + ": " + ex.getMessage());
        }
        catch (final GeneralSecurityException ex)
        {
            throw new ConfigException(fileKey, "cannot read the " + what + " " + file + " (PKCS12 or JKS): " +
                ex.getClass().getSimpleName() + ": " + ex.getMessage());
        }
    }
}
