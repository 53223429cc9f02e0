# A recipe written from the BitBake user manual (SRC_URI, file:// fetcher, overrides).
SUMMARY = "The friendly greeter"
LICENSE = "GPL-3.0-or-later"

SRC_URI = "https://ftp.gnu.org/gnu/hello/${BPN}-${PV}.tar.gz \
           file://0001-fix-build.patch \
           file://0002-greeting.patch;striplevel=1 \
           file://0003-locale.patch \
           file://hello.conf \
           "
SRC_URI[sha256sum] = "cf04af86dc085268c5f4470fbae49b18afbc221b78096aab842d934a76bad0ab"

# Documentation only where the distro wants it.
PACKAGECONFIG ??= "${@bb.utils.contains('DISTRO_FEATURES', 'doc', 'doc', '', d)}"

do_install:append() {
    install -m 0644 ${WORKDIR}/hello.conf ${D}${sysconfdir}
}
