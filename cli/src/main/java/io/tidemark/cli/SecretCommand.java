package io.tidemark.cli;

import io.tidemark.host.HostConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code tidemark secret FILE}: write a new cluster secret, the key of the authentication tag on every message
 * between hosts and between clients and hosts.
 */
@Command(
    name = "secret",
    mixinStandardHelpOptions = true,
    description = {
        "Write a new cluster secret to FILE: 32 random bytes (Base64), in a file created readable by its owner " +
            "only (mode 0600). Copy it to every host and client of the cluster (keeping the mode) and name it in " +
            "their configuration: cluster.secret.file=FILE. Hosts and clients refuse a secret file that its group " +
            "or others may read. The secret is never printed.",
        "Exit code: 3 when FILE exists or cannot be written."},
    sortOptions = false)
final class SecretCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The secret file to create (must not exist).")
    Path file;

    @Override
    public Integer call()
    {
        try
        {
            HostConfig.generateSecret(file);
        }
        catch (final FileAlreadyExistsException ex)
        {
            throw new CliException(ExitCodes.IO, file + " exists: a secret is never overwritten (remove it first " +
                "if you mean to replace the cluster's secret)", ex);
        }
        catch (final IOException ex)
        {
            throw new CliException(ExitCodes.IO, "cannot write " + file + ": " + ex.getMessage(), ex);
        }
        spec.commandLine().getOut().println("wrote a new cluster secret to " + file + " (mode 0600); set " +
            "cluster.secret.file=" + file.toAbsolutePath() + " on every host and client");
        return ExitCodes.OK;
    }
}
