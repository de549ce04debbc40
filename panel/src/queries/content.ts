/** Posts (the content calendar and list), media and connected accounts: keys, queries and changes. */
export const postKeys = {
  all: (orgId: string) => [orgId, 'posts'] as const,
};
