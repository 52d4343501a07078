// bds whoami: which organization and key the settings point at, checked against the API.

import type { MeResponse } from '../api/types.js';
import type { Session } from './session.js';

export interface WhoamiResult {
  me: MeResponse;
  baseUrl: string;
  keySource: string;
  profile: string | undefined;
  keyPrefixMode: string;
}

export async function whoami(session: Session): Promise<WhoamiResult> {
  const { api, key, baseUrl, settings } = await session.connect();
  const me = await api.me();
  // URL.toString() adds a slash to a bare origin; show the base URL as users write it.
  const shown = baseUrl.toString().replace(/\/$/, '');
  return { me, baseUrl: shown, keySource: key.from, profile: settings.profile?.value, keyPrefixMode: key.mode };
}

export function printWhoami(session: Session, result: WhoamiResult): void {
  const { io } = session;
  const { me } = result;
  if (me.key.mode === 'test') io.notice('this is a test key: its batches never become billable');
  if (me.key.mode !== result.keyPrefixMode) {
    io.warn(`the key's prefix says ${result.keyPrefixMode} mode but the API reports ${me.key.mode} mode`);
  }
  io.result({ ...me, baseUrl: result.baseUrl, keySource: result.keySource, profile: result.profile ?? null }, () =>
    [
      `Base URL:      ${result.baseUrl}`,
      `Organization:  ${me.organization.name}`,
      `Key:           ${me.key.id} (${me.key.mode} mode)`,
      `Key from:      ${result.keySource}`,
      ...(result.profile ? [`Profile:       ${result.profile}`] : []),
    ].join('\n'),
  );
}
