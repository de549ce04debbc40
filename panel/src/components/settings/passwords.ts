/** What the browser can tell before asking the API (which applies the full rules: CONTRACT §2). */
export function passwordProblems(input: { newPassword: string; confirm: string; currentPassword?: string }): { newPassword?: string; confirm?: string } {
  const problems: { newPassword?: string; confirm?: string } = {};
  if (input.newPassword.trim().length === 0) problems.newPassword = 'Enter a new password.';
  else if (input.newPassword.length < 8) problems.newPassword = 'At least 8 characters.';
  else if (input.currentPassword !== undefined && input.newPassword === input.currentPassword)
    problems.newPassword = 'Choose a password different from the current one.';
  if (input.confirm !== input.newPassword) problems.confirm = 'The two passwords differ.';
  return problems;
}
