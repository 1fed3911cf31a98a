// Reads every page of a list (oldest first, as the API orders it): the console's lists are small.
export interface PageOf<T> { data: T[]; nextCursor: string | null }

export async function allPages<T>(fetchPage: (cursor: string | undefined) => Promise<PageOf<T>>, maxPages = 50): Promise<T[]> {
  const items: T[] = []
  let cursor: string | undefined
  for (let i = 0; i < maxPages; i++) {
    const page = await fetchPage(cursor)
    items.push(...page.data)
    if (!page.nextCursor) break
    cursor = page.nextCursor
  }
  return items
}
