-- Claims a stopped node left behind. A claim is written before the facilitator is asked, and every request
-- that runs to its end marks its claim settled or failed; one still claimed long after the longest a request
-- can take belongs to a node that stopped mid-payment. Each node sweeps those (runtime/payments/sweep.ts)
-- through this index, which holds only the claims in progress.
CREATE INDEX payments_claimed_idx ON payments (updated_at) WHERE status = 'claimed';
