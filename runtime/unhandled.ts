// A promise rejected with no handler. Node's default ends the process. A backend's connection error (Postgres or
// Redis gone: outageOf in runtime/circuit.ts) reaching here from some background path must not take a serving node
// down during the very outage it answers 503s through: it is logged with its stack (a missing handler to find) and
// the node runs on. Anything else is a bug after which the process's state cannot be trusted: logged as fatal, and the
// process exits 1 (its supervisor starts it again). Installed by runtime/main.ts only: in-process test nodes leave
// such a rejection to the test runner, which fails the test.
import { outageOf } from "./circuit.ts";

interface Log {
  error(obj: object, msg: string): void;
  fatal(obj: object, msg: string): void;
}

export function onUnhandledRejection(log: Log, exit: (code: number) => void): (reason: unknown) => void {
  return (reason) => {
    const backend = outageOf(reason);
    if (backend !== undefined) {
      log.error({ err: reason, backend }, "unhandled rejection of a backend call during an outage; running on");
      return;
    }
    log.fatal({ err: reason }, "unhandled rejection; exiting");
    exit(1);
  };
}
