/**
 * The OAuth connection flow as the panel runs it (CONTRACT §10): ask the service for the provider's
 * authorization URL with `returnTo` set to this page, send the browser there, and on its way back
 * read `?connected=<integrationId>` or `?error=<code>` from the URL, say what happened, and take
 * them out of the URL. Pure, so the component tests pin it.
 */

/** The query parameters the service's callback adds to `returnTo`. */
export const RETURN_PARAMS = ['connected', 'error', 'error_description'] as const;

/**
 * The page to come back to: this page's absolute URL (the service accepts only its own origin)
 * without the parameters of an earlier return, so a second connection does not report the first.
 */
export function returnToFor(href: string): string {
  const url = new URL(href);
  for (const name of RETURN_PARAMS) url.searchParams.delete(name);
  url.hash = '';
  return url.toString();
}

export interface OAuthNotice {
  tone: 'success' | 'error';
  text: string;
  /** The integration just connected (its id), so the page can point at it. */
  integrationId?: string;
}

const ERROR_TEXT: Record<string, string> = {
  access_denied: 'Access was declined at the provider, so nothing was connected. Connect again and allow access to finish.',
  invalid_grant: 'The provider refused the authorization (it expired or was already used). Start the connection again.',
  invalid_response: "The provider's answer could not be verified, so nothing was connected. Start the connection again.",
  token_exchange_failed: 'The provider did not hand over the access token, so nothing was connected. Try again in a moment.',
  profile_unavailable: 'The provider did not say which account was signed in, so nothing was connected. Try again in a moment.',
  integration_missing: 'The account to reconnect was disconnected meanwhile. Connect it again.',
  server_error: 'The provider reported an error. Try again in a moment.',
  temporarily_unavailable: 'The provider is unavailable right now. Try again in a moment.',
};

/** What the provider's error code means for the user (an unknown code is shown as it came). */
export function oauthErrorText(code: string, description?: string): string {
  const known = ERROR_TEXT[code];
  if (known) return known;
  const detail = description?.trim() ? `: ${description.trim()}` : '';
  return `The connection failed (${code})${detail}. Start the connection again.`;
}

/**
 * The message for a return from the provider, or null when the URL carries none. `nameOf` names
 * the connected integration when it is known (the list may not have loaded yet).
 */
export function oauthNotice(search: { connected?: string; error?: string; error_description?: string }, name?: string): OAuthNotice | null {
  if (search.error) return { tone: 'error', text: oauthErrorText(search.error, search.error_description) };
  if (search.connected) {
    return { tone: 'success', integrationId: search.connected, text: name ? `Connected ${name}.` : 'The account is connected.' };
  }
  return null;
}
