# hydrate in an image: build with Rust, run on a slim Debian with git
# (which `render --push` and the pre-commit hooks call).
#
#   docker build -t hydrate:v0.1.0 .
#   docker run --rm -v "$PWD:/repo" -w /repo hydrate:v0.1.0 render --check

FROM rust:1-slim-bookworm AS build
# The rust images carry gcc (libgit2 is compiled from source); the
# version comes from the checkout's HEAD when .git is in the context,
# else `hydrate --version` says `unknown`.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo install --locked --path . --root /out

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/bin/hydrate /usr/local/bin/hydrate
ENTRYPOINT ["hydrate"]
