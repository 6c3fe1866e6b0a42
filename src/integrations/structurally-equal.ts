/**
 * Whether two JSON-like values are equal in everything that serialising, hashing, counting or validating them
 * can see: the same prototype, the same own keys in the same order, equal values at every key and index.
 * Other objects (binary data, URLs, class instances) are equal only when they are the same object, and the
 * same object is equal to itself without a look inside: values must not be edited in place between
 * comparisons. Strings that are one string in memory compare in constant time, which is what makes this much
 * cheaper than hashing a message that was rebuilt around the same strings.
 */
export function structurallyEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  const prototype: unknown = Object.getPrototypeOf(left);
  if (prototype !== Object.getPrototypeOf(right)) return false;
  if (Array.isArray(left)) {
    const other = right as unknown[];
    if (left.length !== other.length) return false;
    for (let index = 0; index < left.length; index++) {
      const item: unknown = left[index];
      if (!structurallyEqual(item, other[index])) return false;
      // A hole and an undefined item read the same but serialise differently.
      if (item === undefined && index in left !== index in other) return false;
    }
    return true;
  }
  if (prototype !== Object.prototype && prototype !== null) return false;
  const leftRecord = left as Record<string, unknown>;
  const rightRecord = right as Record<string, unknown>;
  const keys = Object.keys(leftRecord);
  const otherKeys = Object.keys(rightRecord);
  if (keys.length !== otherKeys.length) return false;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    if (key !== otherKeys[index] || !structurallyEqual(leftRecord[key], rightRecord[key])) return false;
  }
  return true;
}
