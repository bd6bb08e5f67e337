package org.holdfast.client.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** Which agent package may use which library (docs/architecture.md, "Layers and the rules that hold them"). */
@AnalyzeClasses(packages = "org.holdfast.client", importOptions = ImportOption.DoNotIncludeTests.class)
class LibraryBoundariesTest {

    /** The connection lives in client.net; upload and restore see messages and ByteBuffers (net.FrameBuffers), not Netty. */
    @ArchTest
    static final ArchRule nettyOnlyInNet = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.client.net..")
            .should().dependOnClassesThat().resideInAnyPackage("io.netty..");

    /** Native calls (lseek for holes) stay behind scan.DataRegions. */
    @ArchTest
    static final ArchRule jnaOnlyInScan = noClasses()
            .that().resideOutsideOfPackage("org.holdfast.client.scan..")
            .should().dependOnClassesThat().resideInAnyPackage("com.sun.jna..");
}
