// A map of sets (principal -> its sessions, its waiters, ...): an entry exists only while its set is not empty.

/** Add `value` to the set under `key`, making the set if there is none. */
export function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(value);
}

/** Remove `value` from the set under `key`, and the set once empty. False when it was not there. */
export function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): boolean {
  const set = map.get(key);
  if (!set?.delete(value)) return false;
  if (set.size === 0) map.delete(key);
  return true;
}
