import { redirect } from '@tanstack/react-router';
import { restore, signedIn } from './session';

/** For a route's beforeLoad: a signed-in session (restored from the cookie after a reload), or off to sign-in. */
export async function requireSession(location: { href: string }): Promise<void> {
  if (signedIn() || (await restore())) return;
  throw redirect({ to: '/login', search: { redirect: location.href } });
}
