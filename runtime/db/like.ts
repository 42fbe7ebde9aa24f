// LIKE / ILIKE patterns from user text, with the wildcards it contains taken literally.

const literal = (q: string) => q.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A pattern matching `q` anywhere. */
export const containing = (q: string) => `%${literal(q)}%`;

/** A pattern matching text that starts with `q`. */
export const startingWith = (q: string) => `${literal(q)}%`;
