/*
 * Starts DynamoDB Local with its HTTP listener bound to 127.0.0.1 only.
 *
 * DynamoDB Local's command line has no host option: its ServerRunner builds a Jetty server with `new Server(port)`,
 * whose connector binds every interface. This launcher builds the same server from the same command line arguments
 * (ServerRunner.createServerFromCommandLineArgs), sets the host of every Jetty connector to 127.0.0.1 before the server
 * starts, starts it, and checks what it bound. Run as a single-file source program (JEP 330), with DynamoDBLocal.jar
 * and DynamoDBLocal_lib/* on the class path:
 *
 *   java -cp "DynamoDBLocal.jar:DynamoDBLocal_lib/*" LoopbackDynamoDbLocal.java -inMemory -sharedDb -port 8000
 *
 * With `-port 0` (which DynamoDB Local itself refuses) the listener binds a free port the OS chooses, and the launcher
 * prints `LISTENING 127.0.0.1:<port>` once it is bound: the caller learns the port from the process that holds it, so
 * no other program can be listening there in its place (a port chosen by the caller, released and then handed over
 * could be taken in between).
 *
 * Everything in the jar is reached by reflection, so this file compiles without it and names the class or member it
 * could not find. It exits with status 3, and starts nothing, when the listener cannot be bound to loopback: the
 * simulator then reports that, and never claims "127.0.0.1 only".
 *
 * Shipped with the idempotent-event-flow package (simulator/aws/dynamodb-local.ts runs it).
 */
import java.lang.reflect.Field;
import java.lang.reflect.Method;

public final class LoopbackDynamoDbLocal {
  static final String HOST = "127.0.0.1";
  static final int CANNOT_BIND_LOOPBACK = 3;
  static final String[] SERVER_RUNNERS = {
    "software.amazon.dynamodb.services.local.main.ServerRunner", // DynamoDB Local 3.x
    "com.amazonaws.services.dynamodbv2.local.main.ServerRunner", // DynamoDB Local 1.x and 2.x
  };

  public static void main(String[] args) throws Exception {
    boolean ephemeralPort = false;
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals("-port") && args[i + 1].equals("0")) {
        // a valid placeholder for ServerRunner's check; the connector is set to port 0 below
        args[i + 1] = "8000";
        ephemeralPort = true;
      }
    }
    Class<?> runner = serverRunner();
    Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) args);
    if (proxy == null) fail("ServerRunner.createServerFromCommandLineArgs returned no server for these arguments");
    Object jetty = jettyServer(proxy);
    Object[] connectors = (Object[]) jetty.getClass().getMethod("getConnectors").invoke(jetty);
    if (connectors.length == 0) fail("the Jetty server has no connector to bind");
    for (Object connector : connectors) {
      Method setHost = findMethod(connector.getClass(), "setHost", String.class);
      if (setHost == null) fail("the Jetty connector " + connector.getClass().getName() + " has no setHost(String)");
      setHost.invoke(connector, HOST);
      if (ephemeralPort) {
        Method setPort = findMethod(connector.getClass(), "setPort", int.class);
        if (setPort == null) fail("the Jetty connector " + connector.getClass().getName() + " has no setPort(int)");
        setPort.invoke(connector, 0);
      }
    }
    // safeStart starts Jetty only (no start-up telemetry); older versions only have start.
    Method start = findMethod(proxy.getClass(), "safeStart");
    if (start == null) start = proxy.getClass().getMethod("start");
    start.invoke(proxy);
    for (Object connector : connectors) {
      Object host = connector.getClass().getMethod("getHost").invoke(connector);
      if (!HOST.equals(host)) {
        jetty.getClass().getMethod("stop").invoke(jetty);
        fail("a Jetty connector is bound to " + host + " after start");
      }
    }
    for (Object connector : connectors) {
      System.out.println("LISTENING " + HOST + ":" + connector.getClass().getMethod("getLocalPort").invoke(connector));
    }
    System.out.println("DynamoDB Local listening on " + HOST + " only");
    jetty.getClass().getMethod("join").invoke(jetty);
  }

  static Class<?> serverRunner() {
    for (String name : SERVER_RUNNERS) {
      try {
        return Class.forName(name);
      } catch (ClassNotFoundException notThisVersion) {
        // try the next package name
      }
    }
    fail("no DynamoDB Local ServerRunner on the class path (looked for " + String.join(", ", SERVER_RUNNERS) + ")");
    return null;
  }

  /** The Jetty Server inside DynamoDBProxyServer: its field whose type is org.eclipse.jetty.server.Server. */
  static Object jettyServer(Object proxy) throws IllegalAccessException {
    for (Class<?> type = proxy.getClass(); type != null; type = type.getSuperclass()) {
      for (Field field : type.getDeclaredFields()) {
        if (field.getType().getName().equals("org.eclipse.jetty.server.Server")) {
          field.setAccessible(true);
          Object server = field.get(proxy);
          if (server != null) return server;
        }
      }
    }
    fail(proxy.getClass().getName() + " has no org.eclipse.jetty.server.Server field");
    return null;
  }

  static Method findMethod(Class<?> type, String name, Class<?>... parameters) {
    try {
      return type.getMethod(name, parameters);
    } catch (NoSuchMethodException absent) {
      return null;
    }
  }

  static void fail(String why) {
    System.err.println("cannot bind DynamoDB Local to " + HOST + ": " + why);
    System.exit(CANNOT_BIND_LOOPBACK);
  }
}
