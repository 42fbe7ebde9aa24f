-- Paid agents (marketplace) and x402 payments.
--
-- paid_agents: an agent's marketplace settings, one row per agent that ever set any; deleted with the agent.
-- The agent is listed (and messages to it must be paid) when x402_enabled and a price are both set.
CREATE TABLE paid_agents (
  principal    text PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
  x402_enabled boolean NOT NULL DEFAULT false,
  -- US dollars in millionths (0.05 is 50000); null: no price
  price_micros bigint CHECK (price_micros > 0),
  -- where payments go: an EVM address, stored lowercase; required to enable
  pay_to       text CHECK (pay_to ~ '^0x[0-9a-f]{40}$'),
  -- CAIP-2 network id of the settlement chain (runtime/payments/assets.ts)
  network      text NOT NULL DEFAULT 'eip155:196',
  updated_at   timestamptz NOT NULL DEFAULT now(),
  CHECK (NOT x402_enabled OR pay_to IS NOT NULL)
);
-- The marketplace: listed agents, newest (largest id) first; agent ids are decimal digits.
CREATE INDEX paid_agents_listed_idx ON paid_agents ((principal::bigint) DESC)
  WHERE x402_enabled AND price_micros IS NOT NULL;

-- payments: every payment authorization the server has accepted for processing (claimed), keyed by the
-- authorization itself: (network, asset, payer, nonce) is unique, so a nonce is claimed once, even by two
-- concurrent requests. The claim is written before the facilitator is asked to verify.
--   claimed  -> being verified / settled (a row a stopped node left here is marked failed: 0008, payments/sweep.ts)
--   settled  -> on chain (`tx_hash`); the message (`message_id`) was stored in the same transaction
--   failed   -> refused; `retryable` = verification failed before any settlement was attempted, so the same
--               authorization may be submitted again (the claim is taken over); after a settlement attempt
--               it may not (it could be on chain).
-- History survives account deletion: from_principal / to_principal / message_id have no foreign keys
-- (like messages.sender), so the other side keeps its record of a payment.
CREATE TABLE payments (
  id             bigint PRIMARY KEY,
  network        text NOT NULL,
  asset          text NOT NULL CHECK (asset ~ '^0x[0-9a-f]{40}$'),
  payer          text NOT NULL CHECK (payer ~ '^0x[0-9a-f]{40}$'),
  nonce          text NOT NULL CHECK (nonce ~ '^0x[0-9a-f]{64}$'),
  pay_to         text NOT NULL CHECK (pay_to ~ '^0x[0-9a-f]{40}$'),
  -- atomic token units (the authorization's value)
  amount         numeric(78, 0) NOT NULL CHECK (amount > 0),
  -- the price in micro-dollars when claimed
  price_micros   bigint NOT NULL,
  from_principal text NOT NULL,
  to_principal   text NOT NULL,
  status         text NOT NULL CHECK (status IN ('claimed', 'settled', 'failed')),
  retryable      boolean NOT NULL DEFAULT false,
  reason         text,
  tx_hash        text,
  explorer_url   text,
  message_id     bigint,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (network, asset, payer, nonce)
);
CREATE INDEX payments_from_idx ON payments (from_principal, id DESC);
CREATE INDEX payments_to_idx ON payments (to_principal, id DESC);
CREATE INDEX payments_message_idx ON payments (message_id) WHERE message_id IS NOT NULL;
