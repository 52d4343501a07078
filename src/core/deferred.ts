// A tiny `using` for Node 20.19, which has no `await using` without flags: what work acquires it hands to
// `defer`, and everything deferred is released, the last first, however the work ends. A release that throws
// does not keep the ones before it from running (as nested try/finally blocks would have it).

export async function withDeferred<T>(work: (defer: (release: () => unknown) => void) => Promise<T>): Promise<T> {
  const releases: Array<() => unknown> = [];
  try {
    return await work((release) => releases.push(release));
  } finally {
    await releaseAll(releases);
  }
}

async function releaseAll(releases: Array<() => unknown>): Promise<void> {
  const release = releases.pop();
  if (!release) return;
  try {
    await release();
  } finally {
    await releaseAll(releases);
  }
}
