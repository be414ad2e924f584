package io.tidemark.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(Cli.Transcript.class)
class TidemarkCliTest
{
    private static final String[] COMMANDS = {"dump", "verify", "recover", "produce", "tail", "consume", "stat",
        "bench"};

    @Test
    void topLevelHelpListsEveryCommandAndTheExitCodes()
    {
        final Cli.Result help = Cli.run("--help");
        assertEquals(ExitCodes.OK, help.exitCode(), help.toString());
        for (final String command : COMMANDS)
        {
            assertTrue(help.out().contains("  " + command) || help.out().contains(", " + command), command);
        }
        assertTrue(help.out().contains("Exit codes:"), help.out());
        assertTrue(help.out().contains("4    log directory locked by a running process"), help.out());
        assertEquals(ExitCodes.OK, Cli.run("--version").exitCode());
        assertTrue(Cli.run("--version").out().startsWith("tidemark "));
    }

    @Test
    void everySubcommandHasHelpThatStatesItsExitCodes()
    {
        for (final String command : COMMANDS)
        {
            final Cli.Result help = Cli.run(command, "--help");
            assertEquals(ExitCodes.OK, help.exitCode(), command + ": " + help);
            assertTrue(help.out().startsWith("Usage: tidemark " + ("consume".equals(command) ? "tail" : command)),
                help.out());
            assertTrue(help.out().contains("Exit code"), command + ": " + help.out());
            assertEquals(ExitCodes.OK, Cli.run("help", command).exitCode(), command);
        }
    }

    @Test
    void missingOrUnknownCommandsAndOptionsAreUsageErrors()
    {
        final Cli.Result none = Cli.run();
        assertEquals(ExitCodes.USAGE, none.exitCode(), none.toString());
        assertTrue(none.err().contains("Missing required subcommand"), none.err());
        final Cli.Result unknown = Cli.run("defrag");
        assertEquals(ExitCodes.USAGE, unknown.exitCode(), unknown.toString());
        assertTrue(unknown.err().contains("Unmatched argument"), unknown.err());
        final Cli.Result option = Cli.run("verify", "--fast", "x");
        assertEquals(ExitCodes.USAGE, option.exitCode(), option.toString());
        assertTrue(option.err().contains("Unknown option: '--fast'"), option.err());
        assertTrue(option.err().contains("Usage: tidemark verify"), option.err());
        assertEquals(ExitCodes.USAGE, Cli.run("stat").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run("dump", "--max-value-bytes", "-1", ".").exitCode());
    }
}
