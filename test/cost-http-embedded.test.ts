// The adversarial-cost suite over HTTP in embedded mode (PGlite on the node's own thread, memory engines: npm start's
// default), as test/cost-http.test.ts walks it on real Postgres and Redis: every route, every path parameter, query
// field and body field, with the "pictograph+ascii" family only for strings (the other five are walked on servers).
import t from "tap";
import { walkHttp } from "./helpers/cost-http.ts";

// on a loaded machine (other tap jobs, other tests) the walk takes several times its CPU on the wall clock
t.setTimeout(300_000);

walkHttp(t, "embedded", 1);
