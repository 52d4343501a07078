// Rows of cells: aligned columns with a header on a terminal, tab-separated without one in a pipe. Columns are
// aligned by the width a cell takes on screen (wide characters, emoji), not by its length.

import { displayWidth, padToWidth } from './width.js';

export function renderTable(header: string[], rows: string[][], terminal: boolean): string {
  if (!terminal) return rows.map((row) => row.join('\t')).join('\n');
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => displayWidth(row[column] ?? ''))));
  return all
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : padToWidth(cell, widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
