-- The revision of a moment's counts: raised by every statement that changes like_count or comment_count,
-- so the moment record cache can tell newer counts from older ones (runtime/engines/moments.ts).
alter table moments add column rev bigint not null default 0;
