// The one way a test waits: for a condition the code under test makes true, never for time to pass, bounded, failing
// with what it waited for. It lives beside the private servers, which wait with it too (deploy/local/wait.ts).
export { probing, TimedOut, until, type UntilOptions } from "../../deploy/local/wait.ts";
