/**
 * The shape of a login the database adapters accept, checked again by each before anything is
 * sent: a caller may reach an adapter without the contributions check.
 */
const LOGIN_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Why `login` is not a plain name (letters, digits, `_ . -`, not starting with `.` or `-`), or undefined. */
export function loginShapeProblem(login: string): string | undefined {
  return LOGIN_PATTERN.test(login)
    ? undefined
    : 'may contain only letters, digits, _ . and -, and may not start with . or -';
}
