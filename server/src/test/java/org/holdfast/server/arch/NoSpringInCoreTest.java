package org.holdfast.server.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The core packages stay free of Spring: only app and api may wire or serve them with it. */
@AnalyzeClasses(packages = "org.holdfast.server", importOptions = ImportOption.DoNotIncludeTests.class)
class NoSpringInCoreTest {

    @ArchTest
    static final ArchRule coreImportsNoSpring = noClasses()
            .that().resideInAnyPackage("org.holdfast.server.engine..", "org.holdfast.server.container..",
                    "org.holdfast.server.store..", "org.holdfast.server.catalog..", "org.holdfast.server.ingest..",
                    "org.holdfast.server.restore..", "org.holdfast.server.security..", "org.holdfast.server.gc..",
                    "org.holdfast.server.jobs..", "org.holdfast.server.stats..", "org.holdfast.server.volumes..",
                    "org.holdfast.server.verify..")
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework..");

    /** BouncyCastle builds and reads certificates in one place; everything else uses the JDK's TLS types. */
    @ArchTest
    static final ArchRule bouncyCastleOnlyInTls = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.server.security.tls..")
            .should().dependOnClassesThat().resideInAnyPackage("org.bouncycastle..");

    /** Verification reads through the store's types; RocksDB stays in store and catalog. */
    @ArchTest
    static final ArchRule noRocksDbInVerify = noClasses()
            .that().resideInAnyPackage("org.holdfast.server.verify..")
            .should().dependOnClassesThat().resideInAnyPackage("org.rocksdb..");
}
