// The page for a route the app does not have (#/nope): says so and links home, rather than showing the feed.
export function NotFound({ page }: { page: string }) {
  return (
    <section class="page not-found" aria-labelledby="not-found-h">
      <h1 id="not-found-h">Page not found</h1>
      <p class="muted">
        There is no page <code>#/{page}</code> here.
      </p>
      <p>
        <a class="button primary" href="#/feed">
          Go to the feed
        </a>
      </p>
    </section>
  );
}
