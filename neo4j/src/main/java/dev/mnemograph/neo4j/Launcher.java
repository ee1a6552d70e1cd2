package dev.mnemograph.neo4j;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.internal.kernel.api.connectioninfo.ClientConnectionInfo;
import org.neo4j.internal.kernel.api.security.AuthenticationResult;
import org.neo4j.internal.kernel.api.security.LoginContext;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.api.impl.index.LuceneSettings;
import org.neo4j.kernel.api.security.AuthManager;
import org.neo4j.kernel.api.security.AuthToken;
import org.neo4j.kernel.internal.GraphDatabaseAPI;

/**
 * Runs Neo4j Community as an embedded DBMS that exposes Bolt (and optionally HTTP + Browser)
 * exactly like a standalone server, so that {@code neo4j-driver} can connect via bolt://.
 *
 * <p>Configuration: first argument or {@code NEO4J_DATA_DIR} is the home directory for the DBMS
 * (databases under {@code <dir>/data}, logs under {@code <dir>/logs}). Every other setting is read
 * from a JVM system property of the same name (e.g. {@code -DNEO4J_BOLT_PORT=17687}) and then the
 * environment variable.
 *
 * <p>Protocol on stdout: exactly one line {@code MNEMOGRAPH_NEO4J_READY bolt=... http=...} once the
 * DBMS accepts connections. On failure: {@code MNEMOGRAPH_NEO4J_FAILED <message>} on stderr and
 * exit code 1.
 */
public final class Launcher {

    static final String READY = "MNEMOGRAPH_NEO4J_READY";
    static final String FAILED = "MNEMOGRAPH_NEO4J_FAILED";
    static final String USER = "neo4j";
    static final int MIN_PASSWORD_LENGTH = 8;
    /** The vector indexes' Lucene merge factor (Neo4j's internal setting defaults to 50). */
    static final int DEFAULT_VECTOR_MERGE_FACTOR = 10;

    private Launcher() {}

    public static void main(String[] args) {
        // Keep our stdout protocol clean: anything a library prints to System.out goes to stderr.
        PrintStream protocolOut = System.out;
        System.setOut(System.err);
        try {
            run(args, protocolOut);
        } catch (Throwable t) {
            if (SHUTTING_DOWN.get()) {
                // SIGTERM during startup: not a failure; let the shutdown hook complete.
                awaitQuietly(STOPPED);
                return;
            }
            fail(describe(t));
        }
    }

    private static final AtomicReference<DatabaseManagementService> DBMS = new AtomicReference<>();
    private static final CountDownLatch BUILD_DONE = new CountDownLatch(1);
    private static final CountDownLatch STOPPED = new CountDownLatch(1);
    private static final AtomicBoolean SHUTTING_DOWN = new AtomicBoolean();

    private static void shutdownHook() {
        SHUTTING_DOWN.set(true);
        try {
            awaitQuietly(BUILD_DONE);
            DatabaseManagementService dbms = DBMS.get();
            if (dbms == null) {
                return;
            }
            long t0 = System.nanoTime();
            System.err.println("mnemograph-neo4j: shutting down");
            dbms.shutdown();
            System.err.println("mnemograph-neo4j: stopped in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        } catch (Throwable t) {
            System.err.println("mnemograph-neo4j: shutdown error: " + describe(t));
        } finally {
            STOPPED.countDown();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void run(String[] args, PrintStream protocolOut) throws Exception {
        String dir = args.length > 0 && !args[0].isBlank() ? args[0] : setting("NEO4J_DATA_DIR", null);
        if (dir == null || dir.isBlank()) {
            throw new IllegalArgumentException(
                    "no data directory: pass it as the first argument or set NEO4J_DATA_DIR");
        }
        if (dir.startsWith("-")) {
            // Almost always a JVM flag placed after the main class by mistake.
            throw new IllegalArgumentException("data directory '" + dir
                    + "' starts with '-': JVM options must come before the class name");
        }
        Path home = Path.of(dir).toAbsolutePath().normalize();

        String host = setting("NEO4J_HOST", "127.0.0.1");
        int boltPort = port("NEO4J_BOLT_PORT", 7687);
        boolean httpEnabled = bool("NEO4J_HTTP_ENABLED", true);
        int httpPort = port("NEO4J_HTTP_PORT", 7474);
        String password = setting("NEO4J_PASSWORD", "mnemograph-dev");
        boolean authEnabled = bool("NEO4J_AUTH_ENABLED", true);
        String pageCache = setting("NEO4J_PAGECACHE", "256m");
        String txTimeout = setting("NEO4J_TX_TIMEOUT", "0");
        boolean stopOnStdinEof = bool("NEO4J_STOP_ON_STDIN_EOF", false);
        int vectorMergeFactor = intInRange("NEO4J_VECTOR_MERGE_FACTOR", DEFAULT_VECTOR_MERGE_FACTOR, 2, 1000, "an integer");

        if (authEnabled && password.length() < MIN_PASSWORD_LENGTH) {
            throw new IllegalArgumentException(
                    "NEO4J_PASSWORD must be at least " + MIN_PASSWORD_LENGTH + " characters");
        }
        long pageCacheBytes = ByteUnit.parse(pageCache);
        Duration txTimeoutDuration = parseDuration("NEO4J_TX_TIMEOUT", txTimeout);
        Duration minReplanInterval = parseDuration("NEO4J_MIN_REPLAN_INTERVAL", setting("NEO4J_MIN_REPLAN_INTERVAL", "10m"));

        // Fail fast (and clearly) if a port is taken, instead of a long, noisy Neo4j startup failure.
        ensurePortFree(host, boltPort, "Bolt", "NEO4J_BOLT_PORT");
        if (httpEnabled) {
            if (httpPort == boltPort) {
                throw new IllegalArgumentException("NEO4J_HTTP_PORT and NEO4J_BOLT_PORT are both " + boltPort);
            }
            ensurePortFree(host, httpPort, "HTTP", "NEO4J_HTTP_PORT");
        }

        Files.createDirectories(home);
        Path logs = home.resolve("logs");
        Files.createDirectories(logs);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, boltPort))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, boltPort))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, httpEnabled)
                .setConfig(HttpConnector.listen_address, new SocketAddress(host, httpPort))
                .setConfig(HttpConnector.advertised_address, new SocketAddress(host, httpPort))
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, authEnabled)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheBytes)
                .setConfig(GraphDatabaseSettings.transaction_timeout, txTimeoutDuration)
                .setConfig(GraphDatabaseSettings.logs_directory, logs)
                // Netty's default 5 s quiet period dominates shutdown time; nothing is scheduled on the
                // Bolt event loops once the databases are stopped (queued tasks still run), so skip it.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                // A vector query searches every Lucene segment's HNSW graph with the full k, so its
                // cost grows with the segment count. Neo4j merges vector segments only once 50 of
                // one size have piled up (its default), which leaves dozens after steady writes.
                .setConfig(LuceneSettings.vector_standard_merge_factor, vectorMergeFactor)
                // A cached plan is remade when a statistic it used moved by more than the divergence
                // threshold, by the query that finds it stale: ~0.5 s of planning for storeTurn's
                // statements, ~0.35 s for recall's, on a caller's request. Selectivities of small
                // indexes (pending embeddings) flip between 0 and 1 all the time, and Neo4j lowers the
                // threshold from 0.75 to 0.1 over 7 h, so plans were remade ~3 times a minute here. A
                // plan now lives at least NEO4J_MIN_REPLAN_INTERVAL and the threshold stays at 0.75.
                .setConfig(GraphDatabaseSettings.cypher_min_replan_interval, minReplanInterval)
                .setConfig(GraphDatabaseInternalSettings.cypher_replan_algorithm, GraphDatabaseInternalSettings.CypherReplanAlgorithm.NONE);

        // The hook is registered before build() (which takes seconds) so that a SIGTERM during startup
        // still ends in a clean shutdown: it waits for build() to return, then stops the DBMS.
        Thread hook = new Thread(Launcher::shutdownHook, "mnemograph-neo4j-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        DatabaseManagementService dbms;
        try {
            dbms = builder.build();
            DBMS.set(dbms);
        } finally {
            BUILD_DONE.countDown();
        }

        try {
            GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
            GraphDatabaseService neo4j = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
            // Wait until both databases are available before announcing readiness.
            if (!system.isAvailable(Duration.ofMinutes(2).toMillis())
                    || !neo4j.isAvailable(Duration.ofMinutes(2).toMillis())) {
                throw new IllegalStateException("databases did not become available within 2 minutes");
            }
            if (authEnabled) {
                ensurePassword(system, password);
            }
        } catch (Throwable t) {
            if (SHUTTING_DOWN.get()) {
                throw t; // a signal arrived mid-startup; main() lets the hook finish
            }
            // Startup failed after the DBMS was built: stop it cleanly, then report.
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
                dbms.shutdown();
            } catch (Throwable ignored) {
                // best effort
            }
            throw t;
        }

        if (SHUTTING_DOWN.get()) {
            awaitQuietly(STOPPED); // SIGTERM arrived during startup: never announce readiness
            return;
        }
        String line = READY + " bolt=bolt://" + host + ":" + boltPort
                + " http=" + (httpEnabled ? "http://" + host + ":" + httpPort : "disabled");
        protocolOut.println(line);
        protocolOut.flush();

        if (stopOnStdinEof) {
            // For a parent process that holds our stdin open: if it dies (even by SIGKILL), stdin hits EOF
            // and we shut down cleanly instead of lingering with the ports and the store lock.
            Thread watcher = new Thread(() -> {
                try {
                    byte[] buf = new byte[256];
                    while (System.in.read(buf) >= 0) {
                        // ignore input
                    }
                } catch (IOException ignored) {
                    // treat like EOF
                }
                System.err.println("mnemograph-neo4j: stdin closed");
                System.exit(0);
            }, "mnemograph-neo4j-stdin-watch");
            watcher.setDaemon(true);
            watcher.start();
        }

        // Keep the main thread alive until the shutdown hook has stopped the DBMS.
        STOPPED.await();
    }

    /**
     * Make the built-in {@code neo4j} user's password equal to {@code password}, without a pending
     * change requirement. The common case (restart on the same data directory) is checked through
     * the DBMS's own authentication manager and writes nothing; the system database is only altered
     * on first start or when the configured password changed.
     */
    static void ensurePassword(GraphDatabaseService system, String password) {
        AuthenticationResult current = login(system, password);
        if (current == AuthenticationResult.SUCCESS) {
            return;
        }
        try {
            system.executeTransactionally(
                    "ALTER USER " + USER + " SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
            System.err.println("mnemograph-neo4j: set password of user '" + USER + "'");
        } catch (RuntimeException e) {
            String msg = messageChain(e).toLowerCase(Locale.ROOT);
            if (msg.contains("cannot be the same")) {
                // Password already right, only the change requirement was pending.
                system.executeTransactionally("ALTER USER " + USER + " SET PASSWORD CHANGE NOT REQUIRED");
            } else if (msg.contains("does not exist")) {
                system.executeTransactionally(
                        "CREATE USER " + USER + " SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
                System.err.println("mnemograph-neo4j: created user '" + USER + "'");
            } else {
                throw e;
            }
        }
    }

    /** Tries the password in-process (no network, no Cypher); null if that internal API is unusable. */
    private static AuthenticationResult login(GraphDatabaseService system, String password) {
        try {
            AuthManager auth = ((GraphDatabaseAPI) system).getDependencyResolver().resolveDependency(AuthManager.class);
            LoginContext ctx = auth.login(
                    AuthToken.newBasicAuthToken(USER, password.getBytes(StandardCharsets.UTF_8)),
                    ClientConnectionInfo.EMBEDDED_CONNECTION);
            return ctx.subject().getAuthenticationResult();
        } catch (Throwable t) {
            System.err.println("mnemograph-neo4j: could not verify the password in-process (" + describe(t)
                    + "); setting it");
            return null;
        }
    }

    private static void ensurePortFree(String host, int port, String what, String var) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getByName(host), port));
        } catch (IOException e) {
            throw new IllegalStateException(what + " port " + host + ":" + port + " is already in use ("
                    + e.getMessage() + "); stop whatever holds it or set " + var + " to another port");
        }
    }

    private static String setting(String name, String def) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            v = System.getenv(name);
        }
        return v == null || v.isBlank() ? def : v.trim();
    }

    /** An integer setting in [min, max]; a bad value names the setting, `what` it must be, and the range. */
    private static int intInRange(String name, int def, int min, int max, String what) {
        String v = setting(name, null);
        if (v == null) {
            return def;
        }
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be " + what + " " + min + "-" + max + ", got '" + v + "'");
        }
    }

    private static int port(String name, int def) {
        return intInRange(name, def, 1, 65535, "a port number");
    }

    private static boolean bool(String name, boolean def) {
        String v = setting(name, null);
        if (v == null) {
            return def;
        }
        switch (v.toLowerCase(Locale.ROOT)) {
            case "1": case "true": case "yes": case "on":
                return true;
            case "0": case "false": case "no": case "off":
                return false;
            default:
                throw new IllegalArgumentException(name + " must be true or false, got '" + v + "'");
        }
    }

    /** "0" (off), plain seconds ("30"), or a number with unit: ms, s, m, h (e.g. "30s", "500ms"). */
    static Duration parseDuration(String name, String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        try {
            if (s.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2).trim()));
            }
            if (s.endsWith("s")) {
                return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1).trim()));
            }
            if (s.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(s.substring(0, s.length() - 1).trim()));
            }
            if (s.endsWith("h")) {
                return Duration.ofHours(Long.parseLong(s.substring(0, s.length() - 1).trim()));
            }
            return Duration.ofSeconds(Long.parseLong(s));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be like 0, 30s, 500ms, 5m; got '" + v + "'");
        }
    }

    private static String messageChain(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (sb.length() > 0) {
                sb.append(": ");
            }
            sb.append(c.getMessage());
        }
        return sb.toString();
    }

    private static String describe(Throwable t) {
        // The root cause usually carries the useful part (e.g. "Address already in use", store lock).
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String msg = t.getClass().getSimpleName() + ": " + t.getMessage();
        if (root != t) {
            msg += " (caused by " + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
        }
        return msg.replace('\n', ' ');
    }

    private static void fail(String message) {
        System.err.println(FAILED + " " + message);
        System.err.flush();
        // halt, not exit: shutdown hooks / non-daemon Neo4j threads must not keep us alive or print more.
        Runtime.getRuntime().halt(1);
    }
}
