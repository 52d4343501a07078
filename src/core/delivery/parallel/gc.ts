// A worker thread's own garbage collector. Buffers that zlib leaves behind live outside V8's heap, and V8
// collects them only once about 64 MB have piled up since its last collection; a thread that allocates next
// to nothing else would float up to that much above what it uses. The pass and the deflate tasks call this
// now and then instead: a full collection of a worker's small heap takes a millisecond or so.
//
// The hook needs V8's expose-gc flag, set here at first use and only ever called in a worker thread (the flag
// is the process's, but a thread's `gc` exists only once asked for). Where that fails, this does nothing: the
// work runs as well, only with more memory.

import v8 from 'node:v8';
import vm from 'node:vm';

let collector: (() => void) | null | undefined;

export function collectGarbage(): void {
  if (collector === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      collector = vm.runInNewContext('gc') as () => void;
    } catch {
      collector = null;
    }
  }
  collector?.();
}
