// The sandbox process's own peak RSS over the run (it streams each upload to a file), for information.

import { mb } from '../format.js';

export default {
  measures: "the sandbox process's peak RSS",
  rows({ sandboxRss }) {
    return [
      ['sandbox process peak RSS (its own process since issue 34)', mb(sandboxRss), '', 'uploads stream to a file'],
    ];
  },
};
