"""Path globs of the risk floor and the sampler (design 3.2).

Syntax: `**` spans directories, `*` and `?` stay within one segment, `{a,b}` is an
alternative, `[...]` a character class. A pattern without `/` matches the file name at any
depth; a pattern with `/` is anchored at the repository root. Case is "smart": a pattern
written in lower case matches any case (`Migrations/`, `DOCKERFILE`), a pattern with an upper
case letter matches exactly (`*Test.java` must not match `latest.java`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

CI_CONFIG_GLOBS: tuple[str, ...] = (
    ".github/workflows/**",
    ".github/actions/**",
    ".github/dependabot.{yml,yaml}",
    ".github/codeowners",
    "codeowners",
    ".gitlab-ci.{yml,yaml}",
    ".gitlab-ci/**",
    ".gitlab/ci/**",
    ".circleci/**",
    "jenkinsfile",
    "jenkinsfile.*",
    "*.jenkinsfile",
    ".buildkite/**",
    "azure-pipelines*.{yml,yaml}",
    ".azure-pipelines/**",
    ".azuredevops/**",
    ".travis.yml",
    "bitbucket-pipelines.yml",
    ".drone.{yml,yaml}",
    ".woodpecker.{yml,yaml}",
    ".woodpecker/**",
    "appveyor.yml",
    ".appveyor.yml",
    "cloudbuild*.{yml,yaml,json}",
    "buildspec*.{yml,yaml}",
    "codemagic.yaml",
    "bitrise.yml",
    ".semaphore/**",
    ".teamcity/**",
    ".tekton/**",
    "bamboo-specs/**",
    ".goreleaser.{yml,yaml}",
    ".releaserc",
    ".releaserc.*",
    "release.config.{js,cjs,mjs}",
)

POLICY_FILE_GLOBS: tuple[str, ...] = ("graft.{yaml,yml}", ".graft.{yaml,yml}")

DEPENDENCY_GLOBS: tuple[str, ...] = (
    # JavaScript / TypeScript
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "yarn.lock",
    ".yarnrc",
    ".yarnrc.yml",
    ".npmrc",
    "bun.lock",
    "bun.lockb",
    "deno.json",
    "deno.jsonc",
    "deno.lock",
    # Python
    "requirements*.txt",
    "**/requirements/*.txt",
    "constraints*.txt",
    "pyproject.toml",
    "poetry.lock",
    "uv.lock",
    "pdm.lock",
    "pipfile*",
    "setup.py",
    "setup.cfg",
    "environment.{yml,yaml}",
    "conda-lock.yml",
    # Go, Rust, Ruby, JVM, PHP, .NET
    "go.mod",
    "go.sum",
    "go.work",
    "go.work.sum",
    "cargo.toml",
    "cargo.lock",
    "gemfile*",
    "*.gemspec",
    "pom.xml",
    "build.gradle*",
    "settings.gradle*",
    "gradle.lockfile",
    "libs.versions.toml",
    "gradle-wrapper.properties",
    "build.sbt",
    "**/project/plugins.sbt",
    "composer.json",
    "composer.lock",
    "packages.config",
    "packages.lock.json",
    "*.{csproj,fsproj,vbproj}",
    "directory.packages.props",
    "directory.build.props",
    "paket.dependencies",
    "paket.lock",
    "nuget.config",
    # Swift, Dart, Elixir, Erlang, Haskell, Clojure, C/C++, Nix, R, Crystal
    "package.swift",
    "package.resolved",
    "podfile",
    "podfile.lock",
    "cartfile*",
    "pubspec.yaml",
    "pubspec.lock",
    "mix.exs",
    "mix.lock",
    "rebar.config",
    "rebar.lock",
    "stack.yaml",
    "stack.yaml.lock",
    "cabal.project*",
    "*.cabal",
    "deps.edn",
    "project.clj",
    "vcpkg.json",
    "conanfile.{txt,py}",
    "flake.nix",
    "flake.lock",
    "renv.lock",
    "shard.yml",
    "shard.lock",
    # toolchain pins
    ".tool-versions",
    ".nvmrc",
    ".node-version",
    ".python-version",
    ".ruby-version",
    "rust-toolchain",
    "rust-toolchain.toml",
)

INFRA_GLOBS: tuple[str, ...] = (
    "*.tf",
    "*.tfvars",
    "*.tf.json",
    ".terraform.lock.hcl",
    "terragrunt.hcl",
    "*.pkr.hcl",
    "*.nomad",
    "*.bicep",
    "**/infra/**",
    "**/infrastructure/**",
    "**/terraform/**",
    "**/k8s/**",
    "**/kubernetes/**",
    "**/helm/**",
    "**/ansible/**",
    "**/pulumi/**",
    "**/cloudformation/**",
    "charts/**",
    "deploy/**",
    "deployment/**",
    "deployments/**",
    ".platform/**",
    ".ebextensions/**",
    "chart.yaml",
    "kustomization.{yaml,yml}",
    "skaffold.{yaml,yml}",
    "dockerfile",
    "dockerfile.*",
    "*.dockerfile",
    "containerfile",
    ".dockerignore",
    "docker-compose*.{yml,yaml}",
    "compose.{yml,yaml}",
    "compose.*.{yml,yaml}",
    "pulumi.yaml",
    "pulumi.*.yaml",
    "cdk.json",
    "serverless.{yml,yaml}",
    "procfile",
    "fly.toml",
    "render.yaml",
    "vercel.json",
    "netlify.toml",
    "wrangler.toml",
    "heroku.yml",
    "firebase.json",
    "vagrantfile",
)

AUTH_SECRETS_GLOBS: tuple[str, ...] = (
    # directories
    "**/auth/**",
    "**/authn/**",
    "**/authz/**",
    "**/authentication/**",
    "**/authorization/**",
    "**/oauth/**",
    "**/oauth2/**",
    "**/oidc/**",
    "**/saml/**",
    "**/sso/**",
    "**/security/**",
    "**/secrets/**",
    "**/secret/**",
    "**/credentials/**",
    "**/permissions/**",
    "**/rbac/**",
    "**/acl/**",
    "**/iam/**",
    "**/crypto/**",
    "**/guards/**",
    "**/.ssh/**",
    # file names (never a bare "token": tokenizers and design tokens are not secrets)
    "auth.*",
    "auth_*",
    "auth-*",
    "*_auth.*",
    "*-auth.*",
    "*.auth.*",
    "authn*",
    "authz*",
    "Auth[A-Z]*",
    "*[a-z0-9]Auth.*",
    "*[a-z0-9]Auth[A-Z]*",
    "*oauth*",
    "*jwt*",
    "*csrf*",
    "*crypt*",
    "*password*",
    "*passwd*",
    "*credential*",
    "*permission*",
    "*rbac*",
    "*.guard.*",
    "secret.*",
    "secrets.*",
    "*.secret",
    "*.secrets",
    ".env",
    ".env.*",
    "*.env",
    # key material
    "*.pem",
    "*.key",
    "*.crt",
    "*.cer",
    "*.der",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.gpg",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".sops.yaml",
    "*.sops.*",
)

MIGRATION_GLOBS: tuple[str, ...] = (
    "**/migrations/**",
    "**/migration/**",
    "**/migrate/**",
    "**/alembic/versions/**",
    "alembic.ini",
    "**/flyway/**",
    "**/liquibase/**",
    "**/db/changelog/**",
    "*.changelog*.{xml,yaml,yml,json,sql}",
    "**/drizzle/**",
    "schema.sql",
    "structure.sql",
    "schema.rb",
    "*.prisma",
    "*.ddl",
    "sqitch.plan",
)

TEST_GLOBS: tuple[str, ...] = (
    "**/test/**",
    "**/tests/**",
    "**/__tests__/**",
    "**/spec/**",
    "**/specs/**",
    "**/e2e/**",
    "**/__mocks__/**",
    "**/__fixtures__/**",
    "**/__snapshots__/**",
    "**/testdata/**",
    "**/*.Tests/**",
    "**/*.Test/**",
    "*.test.*",
    "*.spec.*",
    "*_test.*",
    "*_tests.*",
    "test_*.py",
    "*_spec.rb",
    "conftest.py",
    "*Test.{java,kt,scala,groovy}",
    "*Tests.{java,kt,scala,cs,swift}",
)

DOCS_GLOBS: tuple[str, ...] = (
    "**/docs/**",
    "**/doc/**",
    "*.md",
    "*.mdx",
    "*.markdown",
    "*.rst",
    "*.adoc",
    "*.asciidoc",
    "{readme,changelog,changes,history,contributing,authors,contributors,maintainers}{,.txt}",
    "{license,licence,copying,notice,code_of_conduct,support}{,.txt}",
)

BINARY_EXTENSIONS: frozenset[str] = frozenset(
    {
        # images
        "png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "webp", "tif", "tiff", "psd", "heic",
        "heif", "avif", "svgz", "xcf",
        # fonts
        "woff", "woff2", "ttf", "otf", "eot",
        # archives and packages
        "zip", "gz", "tgz", "bz2", "xz", "zst", "lz4", "7z", "rar", "tar", "jar", "war", "ear",
        "apk", "aab", "ipa", "dmg", "iso", "deb", "rpm", "msi", "nupkg", "whl", "gem",
        # executables and object code
        "exe", "dll", "so", "dylib", "bin", "o", "a", "lib", "obj", "class", "pyc", "pyo", "wasm",
        # audio and video
        "mp3", "mp4", "m4a", "aac", "wav", "ogg", "oga", "flac", "avi", "mov", "mkv", "webm",
        # office documents
        "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp",
        # data and models
        "sqlite", "sqlite3", "db", "parquet", "avro", "orc", "feather", "pkl", "pickle", "npy", "npz",
        "h5", "hdf5", "onnx", "pt", "pth", "safetensors", "tflite", "pb", "mo",
    }
)  # fmt: skip


_WILDCARDS = ("*", "?", "[")
_LITERAL_RUN = re.compile(r"[^*?\[\]]+")
_CHAR_CLASS = re.compile(r"\[[^\]]*\]")


def _literal(text: str) -> bool:
    return not any(w in text for w in _WILDCARDS)


def _has_literal_upper(pattern: str) -> bool:
    outside = _CHAR_CLASS.sub("", pattern)
    return outside != outside.lower()


def _expand_braces(pattern: str) -> list[str]:
    """`a{b,c}d` -> [abd, acd]; braces do not nest."""
    start = pattern.find("{")
    end = pattern.find("}", start)
    if start < 0 or end < 0:
        return [pattern]
    head, options, tail = pattern[:start], pattern[start + 1 : end].split(","), pattern[end + 1 :]
    return [head + o + rest for o in options for rest in _expand_braces(tail)]


def _translate(pattern: str) -> str:
    """Regex (no anchors) of a brace-free glob."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and (end := pattern.find("]", i + 1)) > 0:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("(?!/)[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _groups(pairs: list[tuple[str, int]]) -> tuple[tuple[int, tuple[str, ...]], ...]:
    by_bit: dict[int, list[str]] = {}
    for text, bit in pairs:
        by_bit.setdefault(bit, []).append(text)
    return tuple((bit, tuple(texts)) for bit, texts in by_bit.items())


class _Index:
    """Globs of one case mode, each tagged with a bit, sorted into lookups.

    A fullmatch over an alternation of a hundred globs costs tens of microseconds per path,
    and the floor tests every path against every rule; so the common shapes (names,
    extensions, name prefixes, directory names, root prefixes) become dict and tuple lookups,
    and a regex runs only after a required literal was found.
    """

    def __init__(self, patterns: list[tuple[str, int]]) -> None:
        names: dict[str, int] = {}
        paths: dict[str, int] = {}
        dir_names: dict[str, int] = {}
        suffixes: list[tuple[str, int]] = []
        prefixes: list[tuple[str, int]] = []
        path_prefixes: list[tuple[str, int]] = []
        path_suffixes: list[tuple[str, int]] = []
        self.name_parts: list[tuple[str, int]] = []
        self.dir_parts: list[tuple[str, int]] = []
        self.prefix_suffix: list[tuple[str, str, int]] = []
        self.regexes: list[tuple[str, Callable[[str], object], bool, int]] = []
        for p, bit in patterns:
            if "/" not in p:
                star = p.find("*")
                if _literal(p):
                    names[p] = names.get(p, 0) | bit
                elif p.startswith("*") and p.endswith("*") and len(p) > 2 and _literal(p[1:-1]):
                    self.name_parts.append((p[1:-1], bit))
                elif p.startswith("*") and _literal(p[1:]):
                    suffixes.append((p[1:], bit))
                elif p.endswith("*") and _literal(p[:-1]):
                    prefixes.append((p[:-1], bit))
                elif star > 0 and _literal(p[:star]) and _literal(p[star + 1 :]):
                    self.prefix_suffix.append((p[:star], p[star + 1 :], bit))
                else:
                    self._add_regex(p, on_path=False, bit=bit)
            elif p.startswith("**/") and p.endswith("/**") and len(p) > 6 and _literal(p[3:-3]):
                middle = p[3:-3]
                if "/" in middle:
                    self.dir_parts.append(("/" + middle + "/", bit))
                else:
                    dir_names[middle] = dir_names.get(middle, 0) | bit
            elif p.endswith("/**") and _literal(p[:-3]):
                path_prefixes.append((p[:-2], bit))
            elif p.startswith("**/") and _literal(p[3:]):
                path_suffixes.append(("/" + p[3:], bit))
                paths[p[3:]] = paths.get(p[3:], 0) | bit
            elif _literal(p):
                paths[p] = paths.get(p, 0) | bit
            else:
                self._add_regex(p, on_path=True, bit=bit)
        self.names, self.paths, self.dir_names = names, paths, dir_names
        self.suffixes = _groups(suffixes)
        self.prefixes = _groups(prefixes)
        self.path_prefixes = _groups(path_prefixes)
        self.path_suffixes = _groups(path_suffixes)
        # One C call each decides whether a group loop can find anything (usually not).
        self.any_suffix = tuple(t for t, _ in suffixes)
        self.any_prefix = tuple(t for t, _ in prefixes)
        self.any_path_prefix = tuple(t for t, _ in path_prefixes)
        self.any_path_suffix = tuple(t for t, _ in path_suffixes)
        self.any_ps_prefix = tuple(pre for pre, _, _ in self.prefix_suffix)
        parts = "|".join(re.escape(part) for part, _ in self.name_parts)
        self.any_part = re.compile(parts).search if parts else None
        self.empty = not patterns

    def _add_regex(self, pattern: str, *, on_path: bool, bit: int) -> None:
        # The longest run of literal text the subject must contain. `**/` is a wildcard that
        # can match nothing (`src/**/a.py` matches `src/a.py`), so it splits runs like `*`.
        runs = _LITERAL_RUN.findall(_CHAR_CLASS.sub("*", pattern).replace("**/", "*"))
        required = max(runs, key=len, default="")
        self.regexes.append((required, re.compile(_translate(pattern)).fullmatch, on_path, bit))

    def mask(self, path: str, name: str, dirs: list[str]) -> int:
        m = self.names.get(name, 0) | self.paths.get(path, 0)
        for d in dirs:
            m |= self.dir_names.get(d, 0)
        if name.endswith(self.any_suffix):
            for bit, texts in self.suffixes:
                if name.endswith(texts):
                    m |= bit
        if name.startswith(self.any_prefix):
            for bit, texts in self.prefixes:
                if name.startswith(texts):
                    m |= bit
        if path.startswith(self.any_path_prefix):
            for bit, texts in self.path_prefixes:
                if path.startswith(texts):
                    m |= bit
        if path.endswith(self.any_path_suffix):
            for bit, texts in self.path_suffixes:
                if path.endswith(texts):
                    m |= bit
        if self.any_part is not None and self.any_part(name):
            for part, bit in self.name_parts:
                if part in name:
                    m |= bit
        if self.dir_parts:
            rooted = "/" + path
            for part, bit in self.dir_parts:
                if part in rooted:
                    m |= bit
        if name.startswith(self.any_ps_prefix):
            for pre, suf, bit in self.prefix_suffix:
                if len(name) >= len(pre) + len(suf) and name.startswith(pre) and name.endswith(suf):
                    m |= bit
        for required, fullmatch, on_path, bit in self.regexes:
            subject = path if on_path else name
            if required in subject and fullmatch(subject) is not None:
                m |= bit
        return m


class GlobIndex:
    """Several glob lists at once: `mask(path)` has bit i set when list i matches.

    Smart case: a glob with an upper-case letter is matched exactly, any other ignores case.
    """

    def __init__(self, lists: Iterable[Iterable[str]]) -> None:
        tagged = [
            (e, 1 << i) for i, globs in enumerate(lists) for g in globs for e in _expand_braces(g.lstrip("/"))
        ]
        exact = [(p, bit) for p, bit in tagged if p != p.lower()]
        self._folded = _Index([(p, bit) for p, bit in tagged if p == p.lower()])
        self._exact = _Index(exact)
        # An exact glob with a capital outside any class (`*Test.java`) cannot match a path
        # without capitals, which saves the second pass for most paths. A class may match a
        # lower-case letter (`[Aa]`, `[!A-Z]`), so its capitals do not count.
        self._exact_needs_upper = all(_has_literal_upper(p) for p, _ in exact)

    def mask(self, path: str) -> int:
        low = path.lower()
        dirs = low.split("/")
        name = dirs.pop()
        m = self._folded.mask(low, name, dirs)
        if not self._exact.empty and not (self._exact_needs_upper and low == path):
            exact_dirs = path.split("/")
            m |= self._exact.mask(path, exact_dirs.pop(), exact_dirs)
        return m

    def __call__(self, path: str) -> bool:
        return self.mask(path) != 0


@lru_cache(maxsize=256)
def _compiled(globs: tuple[str, ...]) -> GlobIndex:
    return GlobIndex([globs])


def glob_matcher(globs: Iterable[str]) -> Callable[[str], bool]:
    """One compiled predicate for a list of globs (cached: the floor asks per case)."""
    return _compiled(tuple(globs))
