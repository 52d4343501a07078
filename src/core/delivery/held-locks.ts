// The delivery locks this process holds, so that the entry point can release them when it must exit at once (a
// second Ctrl-C leaves no time for an orderly stop): a lock left behind would stop the next run, or at best be
// taken over as stale. No imports, so that bin/bds.js loads it at no cost.

const held = new Set<() => void>();

/** Registers a lock's release (synchronous); returns the release that also unregisters it. */
export function holdLock(release: () => void): () => void {
  held.add(release);
  return () => {
    held.delete(release);
    release();
  };
}

/** Releases every lock still held, synchronously; for the entry point, just before it exits. */
export function releaseHeldLocks(): void {
  for (const release of held) {
    try {
      release();
    } catch {
      // Exiting anyway: a lock that cannot be removed is taken over as stale by the next run.
    }
  }
  held.clear();
}
