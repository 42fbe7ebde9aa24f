// The adversarial-cost suite over HTTP (issue 50): every route the router mounts, each path parameter, query field and
// body field sent long and hostile values at and past their caps (test/helpers/cost.ts), one request at a time, while
// a bystander polls /healthz. It fails on an event-loop hold, bystander wait or heap growth past the bounds of
// test/helpers/cost.ts, on a 5xx, a hang, and any failure not in the one error shape. Servers mode (real Postgres and
// Redis) here, embedded mode (PGlite on the node's own thread, memory engines) in test/cost-http-embedded.test.ts
// (a file of its own, so tap runs the two in parallel and each stays within tap's timeout). Both walk every field
// of every route; each string field gets "pictograph+ascii" and, in turn, two (servers) or no (embedded) other
// families of test/helpers/cost.ts's six, to keep the suite within a minute or so of CPU.
import t from "tap";
import { walkHttp } from "./helpers/cost-http.ts";

// on a loaded machine (other tap jobs, other tests) the walk takes several times its CPU on the wall clock
t.setTimeout(300_000);

walkHttp(t, "servers", 3);
